"""Settings of the test shop: Cartridge's project template (cartridge/project_template) as a new
shop owner starts from it, with the database and uploaded media under ``APP_ROOT`` (the folder the
test harness gives each run) and ``DEBUG`` on so that ``runserver`` serves the admin's static files.
Nothing here points at the internet: the admin's scripts, TinyMCE and fonts are Mezzanine's own."""

import os
from pathlib import Path

from django.utils.translation import gettext_lazy as _

from shop_site.currency_locale import ensure_currency_locale

APP_ROOT = Path(os.environ.get("APP_ROOT") or Path(__file__).resolve().parents[1] / "run")

ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
TIME_ZONE = "UTC"
USE_TZ = True
LANGUAGE_CODE = "en"
LANGUAGES = (("en", _("English")),)
USE_MODELTRANSLATION = False
DEBUG = True
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
SITE_ID = 1
USE_I18N = False
AUTHENTICATION_BACKENDS = ("mezzanine.core.auth_backends.MezzanineBackend",)
FILE_UPLOAD_PERMISSIONS = 0o644
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A throwaway test site: these keys sign nothing that outlives a test run.
SECRET_KEY = "webtask-cartridge-test-site-secret-key-not-for-production"
NEVERCACHE_KEY = "webtask-cartridge-test-site-nevercache-key"

SHOP_CURRENCY_LOCALE = ensure_currency_locale()

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(APP_ROOT / "shop.sqlite3")}}

PROJECT_APP_PATH = os.path.dirname(os.path.abspath(__file__))
PROJECT_APP = os.path.basename(PROJECT_APP_PATH)
PROJECT_ROOT = BASE_DIR = os.path.dirname(PROJECT_APP_PATH)
CACHE_MIDDLEWARE_KEY_PREFIX = PROJECT_APP
STATIC_URL = "/static/"
STATIC_ROOT = str(APP_ROOT / "static")
MEDIA_URL = "/media/"
MEDIA_ROOT = str(APP_ROOT / "media")
ROOT_URLCONF = "shop_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [os.path.join(PROJECT_ROOT, "templates")],
        "OPTIONS": {
            "context_processors": [
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.debug",
                "django.template.context_processors.i18n",
                "django.template.context_processors.static",
                "django.template.context_processors.media",
                "django.template.context_processors.request",
                "django.template.context_processors.tz",
                "mezzanine.conf.context_processors.settings",
                "mezzanine.pages.context_processors.page",
            ],
            "loaders": [
                "mezzanine.template.loaders.host_themes.Loader",
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
            ],
        },
    },
]

INSTALLED_APPS = (
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.redirects",
    "django.contrib.sessions",
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "mezzanine.boot",
    "mezzanine.conf",
    "mezzanine.core",
    "mezzanine.generic",
    "mezzanine.pages",
    "cartridge.shop",
    "mezzanine.blog",
    "mezzanine.forms",
    "mezzanine.galleries",
    "shop_seed",
)

MIDDLEWARE = (
    "mezzanine.core.middleware.UpdateCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "cartridge.shop.middleware.ShopMiddleware",
    "mezzanine.core.request.CurrentRequestMiddleware",
    "mezzanine.core.middleware.RedirectFallbackMiddleware",
    "mezzanine.core.middleware.AdminLoginInterfaceSelectorMiddleware",
    "mezzanine.core.middleware.SitePermissionMiddleware",
    "mezzanine.pages.middleware.PageMiddleware",
    "mezzanine.core.middleware.FetchFromCacheMiddleware",
)

PACKAGE_NAME_FILEBROWSER = "filebrowser_safe"
PACKAGE_NAME_GRAPPELLI = "grappelli_safe"
OPTIONAL_APPS = (PACKAGE_NAME_FILEBROWSER, PACKAGE_NAME_GRAPPELLI)

# Mezzanine rewrites some settings from what is defined so far (as the project template does).
from mezzanine.utils.conf import set_dynamic_settings  # noqa: E402

set_dynamic_settings(globals())
