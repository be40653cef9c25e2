"""Django settings of the test shop: Oscar 4.2's documented set-up, offline, everything under
``OSCAR_SITE_ROOT`` (a temporary folder the fixture sets before Django starts)."""

from __future__ import annotations

import os
from pathlib import Path

from oscar import INSTALLED_APPS as OSCAR_INSTALLED_APPS
from oscar.defaults import *  # noqa: F403 - Oscar's settings are meant to be star-imported

ROOT = Path(os.environ.get("OSCAR_SITE_ROOT", "/nonexistent-oscar-site-root"))
HERE = Path(__file__).resolve().parent

DEBUG = True  # the package's static files are served by the staticfiles handler; media by urls.py
SECRET_KEY = "webtask-tests-oscar-site-not-secret"  # a throwaway test site
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SITE_ID = 1
ROOT_URLCONF = "oscar_site.urls"
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-gb"

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(ROOT / "db.sqlite3")}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

INSTALLED_APPS = [*OSCAR_INSTALLED_APPS, "sorl.thumbnail"]  # Oscar's default thumbnailer
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "oscar.apps.basket.middleware.BasketMiddleware",
    "django.contrib.flatpages.middleware.FlatpageFallbackMiddleware",
]
AUTHENTICATION_BACKENDS = [
    "oscar.apps.customer.auth_backends.EmailBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# A test site: hashing a password the fast way keeps each log-in from costing a CPU-second.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    # templates/ first: it only takes jQuery from the package instead of a CDN (no internet here).
    "DIRS": [HERE / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.debug",
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.template.context_processors.i18n",
        "django.contrib.messages.context_processors.messages",
        "oscar.apps.search.context_processors.search_form",
        "oscar.apps.checkout.context_processors.checkout",
        "oscar.apps.communication.notifications.context_processors.notifications",
        "oscar.core.context_processors.metadata",
    ]},
}]

STATIC_URL = "/static/"
MEDIA_URL = "/media/"
MEDIA_ROOT = str(ROOT / "media")
HAYSTACK_CONNECTIONS = {"default": {"ENGINE": "haystack.backends.simple_backend.SimpleEngine"}}
# The simple backend searches the database itself: nothing to index (and it warns when asked to).
HAYSTACK_SIGNAL_PROCESSOR = "haystack.signals.BaseSignalProcessor"
THUMBNAIL_DEBUG = True  # a thumbnail that cannot be made fails the page instead of showing nothing

OSCAR_SHOP_NAME = "Webtask test shop"
OSCAR_DEFAULT_CURRENCY = "GBP"

LOGGING = {  # quiet: the request log of the serving thread would drown pytest's output
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"null": {"class": "logging.NullHandler"}},
    "loggers": {"django.server": {"handlers": ["null"], "level": "WARNING", "propagate": False},
                "django.request": {"level": "ERROR"}},
}
