"""Settings of the Wagtail test site: Wagtail 8's project template cut to what the product editor
needs, offline and headless, with the database and media under ``APP_ROOT`` (a temporary folder
the test fixture gives every run)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("APP_ROOT", "/nonexistent-app-root"))

DEBUG = True  # runserver serves Wagtail's static files through the staticfiles app; media by urls.py
SECRET_KEY = "webtask-tests-wagtail-site-not-secret"  # a throwaway test site
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "cms.urls"
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"
USE_I18N = True

INSTALLED_APPS = [
    "products",
    "wagtail.contrib.forms",
    "wagtail.contrib.redirects",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.snippets",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.search",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
    "django_filters",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "wagtail.contrib.redirects.middleware.RedirectMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.debug",
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]

# The editor's autosave posts while other requests run (an upload, Publish): SQLite as Django 5.1+
# documents it for concurrent writers (immediate transactions, a wait for the lock, WAL), or a
# request fails with "database is locked" on a loaded machine.
DATABASES = {"default": {
    "ENGINE": "django.db.backends.sqlite3", "NAME": str(ROOT / "db.sqlite3"),
    "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30, "init_command": "PRAGMA journal_mode=WAL;"},
}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
# A test site: hashing a password the fast way keeps each log-in from costing a CPU-second.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

STATIC_URL = "/static/"
MEDIA_URL = "/media/"
MEDIA_ROOT = str(ROOT / "media")
DATA_UPLOAD_MAX_NUMBER_FIELDS = 10_000  # the project template's: page editor forms are large

WAGTAIL_SITE_NAME = "Webtask test shop"
WAGTAILADMIN_BASE_URL = os.environ.get("APP_BASE_URL", "http://127.0.0.1")
WAGTAILSEARCH_BACKENDS = {"default": {"BACKEND": "wagtail.search.backends.database"}}
# No internet here, and Chromium must not wait on it: no release check, no Gravatar pictures.
WAGTAIL_ENABLE_UPDATE_CHECK = False
WAGTAIL_GRAVATAR_PROVIDER_URL = None

LOGGING = {  # the request log would fill server.log with every static file
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"null": {"class": "logging.NullHandler"}},
    "loggers": {"django.server": {"handlers": ["null"], "level": "WARNING", "propagate": False},
                "django.request": {"level": "ERROR"}},
}
