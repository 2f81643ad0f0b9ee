"""Settings of a site that mounts Bullpen at /ops/queues/ behind its own login."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "host-site-tests-only"  # noqa: S105 - a test project
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]

INSTALLED_APPS = [
    "daphne",
    # Bullpen. Before the admin, so that its admin/index.html (the link to the dashboard) wins.
    "dashboard",
    "queues",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "hostsite.urls"
ASGI_APPLICATION = "hostsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "host.sqlite3"}}
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# A test project: fast password hashing.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Where signed-out visitors and Sign out go: the site's own login (django.contrib.auth.urls).
# A site without one uses the admin's, LOGIN_URL = "admin:login" (hostsite/startproject_urls.py).
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

BULLPEN = {
    "REDIS_URL": os.environ.get("HOST_REDIS_URL", "redis://127.0.0.1:6379/0"),
    "PREFIX": "bull",
    # The websocket lives under the mount too; dashboard.routing.websocket_route() follows it.
    "WEBSOCKET_PATH": "/ops/queues/ws/",
    # The tests add queues between requests: no cached queue list.
    "DISCOVERY_INTERVAL": 0,
}
