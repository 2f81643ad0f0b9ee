"""Minimal settings for Bullpen's tests. The Redis URL is set by the fixtures in conftest.py."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "bullpen-tests"  # noqa: S105 - test-only
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "django_tasks",
    "axes",
    "dashboard",
    "queues",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
]
# Sign-ins throttled as in the standalone site (tests/auth/test_throttle.py shortens the cool-off).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "dashboard.auth_backend.BasicAuthBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "dashboard.lockout.lockout_response"
# Every basic-auth check runs the hasher once: a fast one, so that signing in costs the tests
# nothing (a password's real hash takes a good part of a second).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ROOT_URLCONF = "bullpen_site.urls"
ASGI_APPLICATION = "bullpen_site.asgi.application"
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
            ]
        },
    }
]
# The test database is a file, as a site's SQLite is: writers from several threads (the audit
# writer's) then wait for each other as they do there, where an in-memory database's shared
# cache fails the second at once ("database table is locked"). Unsynced: nothing outlives the
# run.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BULLPEN_TEST_DB", ":memory:"),
        "OPTIONS": {"init_command": "PRAGMA synchronous=OFF"},
        "TEST": {"NAME": str(Path(tempfile.gettempdir()) / f"bullpen-test-{os.getpid()}.sqlite3")},
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels.layers.InMemoryChannelLayer",
        # A page that falls behind drops messages past this many; live pages get a few a second.
        "CONFIG": {"capacity": 1000},
    }
}
if os.environ.get("BULLPEN_TEST_CHANNEL_LAYER_URL"):  # several server processes
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [os.environ["BULLPEN_TEST_CHANNEL_LAYER_URL"]]},
        }
    }
USE_TZ = True
TIME_ZONE = "UTC"
# As the standalone site: English unless the browser or the switcher asks for another.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

BULLPEN = {
    # The fixtures replace this; a live server started by them gets it from the environment.
    "REDIS_URL": os.environ.get("BULLPEN_TEST_REDIS_URL", "redis://127.0.0.1:1/0"),
    "PREFIXES": [os.environ.get("BULLPEN_TEST_PREFIX", "bull")],
    # Scanned afresh for every request, unless a test's server keeps the scan as a site does.
    "DISCOVERY_INTERVAL": float(os.environ.get("BULLPEN_TEST_DISCOVERY_INTERVAL", "0")),
    "READ_ACCESS": "dashboard.access.anyone",
    "BASIC_AUTH_PLAIN": {"operator": "s3cret-pass"},
    # Slower, smaller batches for the fault tests' servers (JSON).
    "ACTIONS": json.loads(os.environ.get("BULLPEN_TEST_ACTIONS", "{}")),
    # A quicker pace for a test's server where it waits on the reader (JSON).
    "LIVE": json.loads(os.environ.get("BULLPEN_TEST_LIVE", "{}")),
    # A failed tab's groups come with its page however long a loaded machine takes to group a
    # few failures, so the tests that act on them find them in place; the closed fold they go
    # into when they come late has its own test (a server waiting 0 s).
    "FAILURE_GROUPS_WAIT": 10.0,
}
# What a process started by a test changes in BULLPEN (JSON): the MCP server's tests.
BULLPEN.update(json.loads(os.environ.get("BULLPEN_TEST_EXTRA", "{}")))
# Django tasks on BullMQ (queues/tasks/): tests/tasks/ enqueues and runs them. A worker process
# started with BULLPEN_TEST_TASKS=0 is a site without them.
if os.environ.get("BULLPEN_TEST_TASKS", "1") == "1":
    TASKS = {
        "default": {
            "BACKEND": "queues.tasks.BullMQBackend",
            "QUEUES": ["default", "tasks-urgent"],
        }
    }
if os.environ.get("BULLPEN_TEST_CONNECTIONS"):  # several Redis servers (JSON of CONNECTIONS)
    del BULLPEN["REDIS_URL"]
    BULLPEN["CONNECTIONS"] = json.loads(os.environ["BULLPEN_TEST_CONNECTIONS"])

# As the standalone site: channels-redis's per-second tracebacks during an outage, once a minute.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"once_a_minute": {"()": "dashboard.log_filters.OncePerInterval"}},
    "loggers": {
        name: {"filters": ["once_a_minute"]}
        for name in ("channels_redis.pubsub", "channels_redis.core")
    },
}
