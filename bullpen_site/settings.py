"""Settings of the standalone Bullpen site. Only this module reads the environment.

Environment: REDIS_URL (redis://, rediss://, unix://, a Sentinel-watched master as
redis+sentinel://host:26379,host:26379/<service>, or a Redis Cluster as
redis+cluster://host:7000,host:7001), or REDIS_URLS for several Redis servers in one dashboard
("eu=redis://eu-redis:6379/0 us=rediss://us-redis:6380/0": whitespace-separated name=url pairs,
the first the default; bullpen_site/env_connections.py), BULLMQ_PREFIX, DASHBOARD_USERNAME,
DASHBOARD_PASSWORD, SECRET_KEY (else one made into var/secret_key), DEBUG, ALLOWED_HOSTS,
CSRF_TRUSTED_ORIGINS (origins, whitespace-separated), BULLPEN_BEHIND_TLS_PROXY / BULLPEN_HTTPS (1:
HTTPS only, Secure cookies, HSTS for BULLPEN_HSTS_SECONDS, BULLPEN_HSTS_INCLUDE_SUBDOMAINS (0: not
for subdomains), BULLPEN_HSTS_PRELOAD), BULLPEN_DB (SQLite file for the audit log),
BULLPEN_READ_ONLY, READ_ONLY_QUEUES (queue names, whitespace-separated), BULLPEN_OPEN_READS (1:
anyone may read even with credentials set), CHANNEL_LAYER_URL (a Redis for the channel layer when
running several server processes), BULLPEN_SILENCED_CHECKS (system check ids that do not apply,
comma-separated), METRICS_TOKEN (turns /metrics on: the bearer token scrapers send).
Per-queue access (bullpen_site/env_access.py): DASHBOARD_USERS (more basic-auth users,
"name:password", whitespace-separated), BASIC_AUTH_SCOPES ("alice=tenant42,billing bob=ops"),
QUEUE_ACCESS (the BULLPEN["QUEUE_ACCESS"] rules as JSON).
Alerts: ALERT_EMAIL_TO (addresses, whitespace-separated), ALERT_WEBHOOK_URL (URLs,
whitespace-separated), ALERT_LINK_BASE (the site's public origin, for links in notices),
ALERT_THRESHOLDS ("key=value ..." keys of ALERTS: rules, INTERVAL, COOLDOWN, RENOTIFY,
RATE_WINDOW, RATE_MIN_JOBS; None turns one off; bullpen_site/env_alerts.py), and
the mail server: EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS
(1: STARTTLS), DEFAULT_FROM_EMAIL.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF

from bullpen_site import env_access, env_alerts, env_connections
from bullpen_site.secret_key import stored_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("SECRET_KEY") or stored_secret_key(BASE_DIR / "var" / "secret_key")
DEBUG = os.environ.get("DEBUG", "") == "1"
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",")
CSRF_TRUSTED_ORIGINS = os.environ.get("CSRF_TRUSTED_ORIGINS", "").split()

# Served over HTTPS: directly (BULLPEN_HTTPS=1) or behind a proxy that ends TLS and says so in
# X-Forwarded-Proto (BULLPEN_BEHIND_TLS_PROXY=1; the proxy must set that header itself).
if os.environ.get("BULLPEN_BEHIND_TLS_PROXY", "") == "1":
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
_https = (
    os.environ.get("BULLPEN_BEHIND_TLS_PROXY", "") == "1" or os.environ.get("BULLPEN_HTTPS") == "1"
)
_preload = os.environ.get("BULLPEN_HSTS_PRELOAD") == "1"
if _https:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("BULLPEN_HSTS_SECONDS", "31536000"))
    # The hosts under the dashboard's own name (ops.example.com's subdomains, never
    # example.com's) are HTTPS only too, unless BULLPEN_HSTS_INCLUDE_SUBDOMAINS=0.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = os.environ.get("BULLPEN_HSTS_INCLUDE_SUBDOMAINS") != "0"
    # Browsers' built-in list takes registrable domains only (example.com), whose owner decides
    # for every host under it: only when asked. Django's reminder (security.W021) is about
    # that decision, not this site's, so it is silenced unless preloading is asked for.
    SECURE_HSTS_PRELOAD = _preload

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "django_tasks",
    "csp",
    "axes",
    "dashboard",
    "queues",
    # The standalone site itself: the demo's bullpen_demo command.
    "bullpen_site",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the switcher's choice (a cookie), else the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it answers 429 for a request whose sign-in it locked out.
    "axes.middleware.AxesMiddleware",
]

# Sign-ins are throttled (django-axes): 5 failures for a user name from one address lock
# that pair out for 15 minutes, and each further attempt meanwhile restarts the wait. Axes'
# backend comes first so that a locked-out attempt is refused before any password is hashed;
# Bullpen's basic-auth users are checked next, before the admin's.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "dashboard.auth_backend.BasicAuthBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # an admin sign-in clears its earlier failures
AXES_LOCKOUT_CALLABLE = "dashboard.lockout.lockout_response"  # 429 with Retry-After

# Scripts and styles only from this site's own files: no inline script, handler or style runs,
# whatever a job's data manages to put in a page. Websockets and fetches go to this site only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [NONE],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],  # the icon, inlined in every page
        "font-src": [SELF],
        "connect-src": [SELF],
        "form-action": [SELF],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
    }
}

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
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("BULLPEN_DB") or BASE_DIR / "var" / "bullpen.sqlite3",
    }
}

# One process: the in-memory layer. Several processes (CHANNEL_LAYER_URL set): Redis pub/sub,
# which publishes each live message once per group, however many pages watch.
if os.environ.get("CHANNEL_LAYER_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [os.environ["CHANNEL_LAYER_URL"]]},
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            # A page that falls behind drops messages past this many; live pages get a few a second.
            "CONFIG": {"capacity": 1000},
        }
    }

LANGUAGE_CODE = "en"
# The languages the dashboard has complete catalogs for (dashboard/locale/).
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "admin:login"

_username = os.environ.get("DASHBOARD_USERNAME", "")
_password = os.environ.get("DASHBOARD_PASSWORD", "")
_users = {_username: _password} if _username and _password else {}
_users.update(env_access.users(os.environ.get("DASHBOARD_USERS", "")))
_credentials = bool(_users)
# With credentials set, reading needs them too (job data often holds personal data and
# secrets); BULLPEN_OPEN_READS=1 opens reads to anyone, and bullpen.W012 then says so. Without
# credentials nobody could sign in to read, so reads stay open (and W012 warns).
_open_reads = not _credentials or os.environ.get("BULLPEN_OPEN_READS", "") == "1"

BULLPEN = {
    "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    "PREFIXES": [os.environ.get("BULLMQ_PREFIX", "bull")],
    "READ_ONLY": os.environ.get("BULLPEN_READ_ONLY", "") == "1",
    "QUEUE_OPTIONS": {
        name: {"read_only": True} for name in os.environ.get("READ_ONLY_QUEUES", "").split()
    },
    "BASIC_AUTH_PLAIN": _users,
    "BASIC_AUTH_SCOPES": env_access.scopes(os.environ.get("BASIC_AUTH_SCOPES", "")),
    # Who may view and operate which queues; unset: every user every queue.
    "QUEUE_ACCESS": env_access.rules(os.environ.get("QUEUE_ACCESS", "")),
    # Empty: /metrics answers 404.
    "METRICS_TOKEN": os.environ.get("METRICS_TOKEN", ""),
    # Job field paths masked before they leave the server: "data.password data.*.token".
    "REDACT": os.environ.get("REDACT_FIELDS", "").split(),
    # The MCP server (./run mcp): its retry, pause and resume tools only when asked for.
    "MCP": {"ACTIONS": os.environ.get("BULLPEN_MCP_ACTIONS", "") == "1"},
    # No address and no webhook: alerts are shown, not sent.
    "ALERTS": {
        "EMAIL_TO": os.environ.get("ALERT_EMAIL_TO", "").split(),
        "WEBHOOKS": os.environ.get("ALERT_WEBHOOK_URL", "").split(),
        "LINK_BASE": os.environ.get("ALERT_LINK_BASE", ""),
        **env_alerts.thresholds(os.environ.get("ALERT_THRESHOLDS", "")),
    },
}
# Django's Tasks API on BullMQ (queues/tasks/): a @task function is a job of its queue_name,
# run by `./run worker` (manage.py runqueueworker). BULLPEN_TASK_QUEUES names the queues.
TASKS = {
    "default": {
        "BACKEND": "queues.tasks.BullMQBackend",
        "QUEUES": os.environ.get("BULLPEN_TASK_QUEUES", "default").split(),
    }
}
if os.environ.get("REDIS_URLS", "").strip():
    # Several Redis servers, each under its name; REDIS_URL is then left unused.
    del BULLPEN["REDIS_URL"]
    BULLPEN["CONNECTIONS"] = env_connections.connections(os.environ["REDIS_URLS"])
if os.environ.get("BULLPEN_MAX_SOCKETS_PER_CLIENT"):
    # Many viewers from one address: a load test, or a proxy in front without --proxy-headers.
    BULLPEN["LIVE"] = {"max_sockets_per_client": int(os.environ["BULLPEN_MAX_SOCKETS_PER_CLIENT"])}
if _open_reads:
    BULLPEN["READ_ACCESS"] = "dashboard.access.anyone"
else:
    # A page asked for without credentials asks the browser for them (not the admin's login).
    LOGIN_URL = "bullpen:sign-in"

# The mail server alert e-mails go through (Django's SMTP backend).
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "") == "1"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "bullpen@localhost")

# Ids (comma-separated) from BULLPEN_SILENCED_CHECKS, e.g. ./run demo's on the loopback interface.
SILENCED_SYSTEM_CHECKS = list(
    filter(None, os.environ.get("BULLPEN_SILENCED_CHECKS", "").split(","))
)
if _https and not _preload:
    SILENCED_SYSTEM_CHECKS.append("security.W021")  # see SECURE_HSTS_PRELOAD above

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # channels-redis logs a traceback every second while its Redis is away: once a minute.
    "filters": {"once_a_minute": {"()": "dashboard.log_filters.OncePerInterval"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        name: {"filters": ["once_a_minute"]}
        for name in ("channels_redis.pubsub", "channels_redis.core")
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
