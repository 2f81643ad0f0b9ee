"""System checks: what a site that mounts Bullpen forgot, said by ``manage.py check``.

Registered by ``DashboardConfig.ready``. Ids: ``bullpen.E…`` stop ``runserver`` and ``migrate``;
``bullpen.W…`` are printed. Silence one with ``SILENCED_SYSTEM_CHECKS`` when it is intended.
Only the Redis reachability check goes over the network, so it runs with ``check --deploy`` alone.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from queues.config import problems as conf_problems
from queues.config import settings as conf
from queues.redis.urls import redact as redact  # the check messages hide passwords

TAG = "bullpen"
DEFAULT_READER = "dashboard.access.staff_or_basic_reader"
DEFAULT_OPERATOR = "dashboard.access.staff_or_basic_operator"
OPEN_READS = "dashboard.access.anyone"
_PROBE_TIMEOUT = 1.0  # seconds: a check must not hold up manage.py for long


def _config() -> dict[str, Any] | None:
    """The merged settings, or None when they are unusable (``check_settings`` says why)."""
    if any(p.code.startswith("E") for p in conf_problems.problems()):
        return None
    return conf.get_config()


@register(TAG)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    for problem in conf_problems.problems():
        kind = Error if problem.code.startswith("E") else Warning
        found.append(kind(problem.message, hint=problem.hint or None, id=f"bullpen.{problem.code}"))
    config = _config()
    if config is not None:
        found += _nested_keys(config)
    return found


def _nested_keys(config: Mapping[str, Any]) -> list[CheckMessage]:
    """Unknown keys inside the dict settings, which are otherwise ignored without a word."""
    from queues.alerts.thresholds import DEFAULTS as ALERT_RULES
    from queues.bulk.settings import BackgroundSettings
    from queues.live.follower import LiveSettings

    # (where in BULLPEN, the dict given there, the keys it may hold)
    nested: list[tuple[str, Mapping[str, Any], Iterable[str]]] = [
        ("BULLPEN['LIVE']", config["LIVE"], LiveSettings.__dataclass_fields__),
        ("BULLPEN['ACTIONS']", config["ACTIONS"], BackgroundSettings.__dataclass_fields__),
        ("BULLPEN['ALERTS']", config["ALERTS"], [*ALERT_RULES, *conf.ALERT_DELIVERY_KEYS]),
        ("BULLPEN['WORKER']", config["WORKER"], conf.DEFAULTS["WORKER"]),
    ]
    for queue, options in config["QUEUE_OPTIONS"].items():
        where = f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]"
        nested.append((where, options, conf_problems.QUEUE_OPTION_KEYS))
        nested.append((f"{where}['alerts']", options.get("alerts") or {}, ALERT_RULES))
    found: list[CheckMessage] = []
    for where, given, keys in nested:
        valid = sorted(keys)
        unknown = sorted(set(given) - set(valid), key=str)
        if unknown:
            found.append(
                Warning(
                    f"Unknown {where} settings {unknown!r}; they are ignored.",
                    hint="Valid settings there: " + ", ".join(valid) + ".",
                    id="bullpen.W016",
                )
            )
    return found


@register(TAG)
def check_installed_apps(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if importlib.util.find_spec("channels") is None:
        found.append(
            Error(
                "Channels is not installed: Bullpen's live updates are a Channels websocket.",
                hint="pip install channels daphne (both are dependencies of bullpen).",
                id="bullpen.E001",
            )
        )
    missing = [name for name in ("daphne", "channels") if not apps.is_installed(name)]
    if missing:
        found.append(
            Warning(
                f"{' and '.join(repr(m) for m in missing)} not in INSTALLED_APPS: "
                "'manage.py runserver' serves no websockets, so pages never go live.",
                hint='Add "daphne" first in INSTALLED_APPS, and "channels".',
                id="bullpen.W001",
            )
        )
    names = [config.name for config in apps.get_app_configs()]
    if "daphne" in names and "django.contrib.staticfiles" in names:
        if names.index("daphne") > names.index("django.contrib.staticfiles"):
            found.append(
                Warning(
                    "'daphne' comes after 'django.contrib.staticfiles' in INSTALLED_APPS: "
                    "runserver is staticfiles' own, without websockets.",
                    hint='Move "daphne" before "django.contrib.staticfiles".',
                    id="bullpen.W002",
                )
            )
    if not apps.is_installed("queues"):
        found.append(
            Warning(
                "'dashboard' is installed without 'queues': Bullpen's queue layer has no app "
                "(no runqueueworker command, no checks of its own).",
                hint='Add "queues" to INSTALLED_APPS next to "dashboard".',
                id="bullpen.W003",
            )
        )
    if not apps.is_installed("django_htmx"):
        found.append(
            Error(
                "'django_htmx' is not in INSTALLED_APPS: Bullpen's pages load its template "
                "tags and script, and fail to render without it.",
                hint='Add "django_htmx" to INSTALLED_APPS (it is a dependency of bullpen).',
                id="bullpen.E003",
            )
        )
    return found


@register(TAG)
def check_websocket_route(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    dotted = getattr(settings, "ASGI_APPLICATION", None)
    if not dotted:
        return [
            Error(
                "ASGI_APPLICATION is not set: Bullpen's live updates need an ASGI application "
                "that routes websockets.",
                hint=_ROUTE_HINT,
                id="bullpen.E004",
            )
        ]
    if importlib.util.find_spec("channels") is None:
        return []  # bullpen.E001 says it
    try:
        application = import_string(dotted)
    except Exception as error:  # whatever the site's asgi.py raises, the check reports it
        return [
            Error(
                f"ASGI_APPLICATION {dotted!r} cannot be imported: {error}",
                hint="Fix the import; ASGI_APPLICATION is '<module>.<variable>'.",
                id="bullpen.E005",
            )
        ]
    from dashboard.routing import find_live_routes

    search = find_live_routes(application)
    if not search.routes:
        if search.opaque:
            return [
                Warning(
                    f"No websocket route to Bullpen found in {dotted!r}; the search could not "
                    f"look inside {', '.join(sorted(set(search.opaque)))}.",
                    hint=_ROUTE_HINT + " Silence bullpen.W004 if the route is there.",
                    id="bullpen.W004",
                )
            ]
        return [
            Error(
                f"{dotted!r} has no websocket route to Bullpen: pages cannot go live.",
                hint=_ROUTE_HINT,
                id="bullpen.E006",
            )
        ]
    return _route_problems(search.routes)


_ROUTE_HINT = (
    "In asgi.py: application = ProtocolTypeRouter({'http': get_asgi_application(), "
    "'websocket': AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter("
    "[dashboard.routing.websocket_route()])))}), and "
    "ASGI_APPLICATION = '<project>.asgi.application'."
)


def _route_problems(routes: list[Any]) -> list[CheckMessage]:
    from channels.auth import AuthMiddleware
    from channels.security.websocket import OriginValidator

    found: list[CheckMessage] = []
    config = _config()
    wanted = str(config["WEBSOCKET_PATH"]) if config else None
    paths = [route.path for route in routes]
    if wanted and None not in paths and wanted not in paths:
        found.append(
            Warning(
                f"Bullpen's pages connect to {wanted!r} (WEBSOCKET_PATH), but the websocket "
                f"route is at {', '.join(repr(p) for p in paths)}.",
                hint="Route it with dashboard.routing.websocket_route(), which follows "
                "WEBSOCKET_PATH, or set WEBSOCKET_PATH to the route's path.",
                id="bullpen.W005",
            )
        )

    def wrapped(kind: type) -> bool:
        return any(isinstance(w, kind) for route in routes for w in route.wrappers)

    if config and config["READ_ACCESS"] != OPEN_READS and not wrapped(AuthMiddleware):
        found.append(
            Warning(
                "Bullpen's websocket route is not behind Channels' AuthMiddleware: signed-in "
                "users are anonymous there and their pages are refused live updates.",
                hint="Wrap the websocket router in channels.auth.AuthMiddlewareStack.",
                id="bullpen.W006",
            )
        )
    if not wrapped(OriginValidator):
        found.append(
            Warning(
                "Bullpen's websocket route does not check the Origin header: any web page a "
                "signed-in user visits could open it with their cookies and read job data.",
                hint="Route it with dashboard.routing.websocket_route(), which checks the "
                "origin's scheme, host and port.",
                id="bullpen.W007",
            )
        )
    return found


@register(TAG)
def check_channel_layer(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    layers = getattr(settings, "CHANNEL_LAYERS", None) or {}
    if "default" in layers:
        return []
    return [
        Warning(
            "CHANNEL_LAYERS has no 'default' layer: Bullpen's live updates go through it.",
            hint="One server process: CHANNEL_LAYERS = {'default': {'BACKEND': "
            "'channels.layers.InMemoryChannelLayer'}}. Several: channels_redis's "
            "RedisPubSubChannelLayer (see docs/deployment.md).",
            id="bullpen.W008",
        )
    ]


# A deployment check: only ``check --deploy`` opens a connection, never ``migrate`` or
# ``runserver``, which run the other checks on every start.
@register(TAG, deploy=True)
def check_redis(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    config = _config()
    if config is None:
        return []
    from queues.redis.connections import configured

    timeout = min(float(config["REDIS_TIMEOUT"]), _PROBE_TIMEOUT)
    found: list[CheckMessage] = []
    several = len(configured()) > 1
    for connection in configured():
        try:
            _ping(connection.url, timeout)
        except Exception as error:  # a check reports; it never stops manage.py
            named = f" (connection {connection.name!r})" if several else ""
            found.append(
                Warning(
                    f"Redis at {redact(connection.url)}{named} is unreachable: {error}",
                    hint="Its pages answer 503 until it is. Check BULLPEN['REDIS_URL'] or "
                    "BULLPEN['CONNECTIONS'] (rediss:// for TLS, redis+sentinel:// for Sentinel, "
                    "redis+cluster:// for a Cluster) and that this machine can reach it.",
                    id="bullpen.W009",
                )
            )
    return found


def _ping(url: str, timeout: float) -> None:
    """PING the server ``url`` names, the master its sentinels name, or a cluster's nodes."""
    import redis
    from redis.cluster import ClusterNode, RedisCluster

    from queues.redis.sentinel import sync_master_client
    from queues.redis.urls import ClusterUrl, SentinelUrl, parse_redis_url

    options: dict[str, Any] = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    target = parse_redis_url(url)
    if isinstance(target, SentinelUrl):
        with sync_master_client(target, options, timeout) as master:
            master.ping()
        return
    if isinstance(target, ClusterUrl):
        cluster = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in target.nodes],  # type: ignore[no-untyped-call]
            username=target.username,
            password=target.password,
            ssl=target.tls,
            **options,
        )
        try:
            cluster.ping(target_nodes=RedisCluster.ALL_NODES)
        finally:
            cluster.close()
        return
    client = redis.Redis.from_url(url, **options)
    try:
        client.ping()
    finally:
        client.close()


@register(TAG)
def check_access(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    config = _config()
    if config is None:
        return []
    found: list[CheckMessage] = []
    for key in ("READ_ACCESS", "WRITE_ACCESS"):
        try:
            ok = callable(import_string(str(config[key])))
        except ImportError:
            ok = False
        if not ok:
            found.append(
                Error(
                    f"BULLPEN[{key!r}] = {config[key]!r} is not an importable callable.",
                    hint="A dotted path to a function taking a dashboard.principal.Principal "
                    "and returning a bool; the default is " + _DEFAULTS[key] + ".",
                    id="bullpen.E007",
                )
            )
    found += _password_hashes(config)
    found += _queue_access(config)
    found += _who_can_sign_in(config)
    found += _clear_text_credentials(config)
    return found


_DEFAULTS = {"READ_ACCESS": DEFAULT_READER, "WRITE_ACCESS": DEFAULT_OPERATOR}


def _queue_access(config: Mapping[str, Any]) -> list[CheckMessage]:
    """QUEUE_ACCESS must parse: an unusable rule would answer 500 on every page."""
    from dashboard.auth.queue_access_rules import rule_problems

    return [
        Error(
            f"BULLPEN['QUEUE_ACCESS']: {problem}.",
            hint="A list of rules such as {'QUEUES': 't0042-*', 'VIEW': ['group:tenant42'], "
            "'OPERATE': ['group:tenant42-ops']}; principals are '*', 'group:<name>', "
            "'perm:<app_label.codename>', 'user:<name>' or 'scope:<name>'.",
            id="bullpen.E017",
        )
        for problem in rule_problems(config.get("QUEUE_ACCESS"))
    ]


def _password_hashes(config: Mapping[str, Any]) -> list[CheckMessage]:
    from django.contrib.auth.hashers import identify_hasher

    found: list[CheckMessage] = []
    for name, hashed in config["BASIC_AUTH_USERS"].items():
        try:
            identify_hasher(hashed)
        except (TypeError, ValueError):
            found.append(
                Error(
                    f"BULLPEN['BASIC_AUTH_USERS'][{name!r}] is not a Django password hash, so "
                    "no password matches it.",
                    hint="Store the hash django.contrib.auth.hashers.make_password('<password>') "
                    "returns, not the password itself.",
                    id="bullpen.E008",
                )
            )
    return found


def _session_login() -> bool:
    """Whether the site signs users in with Django sessions (what the default checks use)."""
    from django.contrib.auth.middleware import AuthenticationMiddleware

    if not apps.is_installed("django.contrib.auth"):
        return False
    for dotted in settings.MIDDLEWARE:
        try:
            middleware = import_string(dotted)
        except ImportError:
            continue
        if isinstance(middleware, type) and issubclass(middleware, AuthenticationMiddleware):
            return True
    return False


def _who_can_sign_in(config: Mapping[str, Any]) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    read, write = config["READ_ACCESS"], config["WRITE_ACCESS"]
    basic = bool(config["BASIC_AUTH_USERS"] or config["BASIC_AUTH_PLAIN"])
    if not basic and not _session_login():
        nobody = None
        if read == DEFAULT_READER:
            nobody = "open Bullpen"
        elif write == DEFAULT_OPERATOR and not config["READ_ONLY"]:
            nobody = "act on queues (the dashboard is read-only in effect)"
        if nobody:
            found.append(
                Warning(
                    f"Nobody can {nobody}: the default access checks let in staff signed in "
                    "through Django sessions and basic-auth users, and this site has neither.",
                    hint="Add django.contrib.auth with AuthenticationMiddleware, or "
                    "BULLPEN['BASIC_AUTH_USERS']; or set READ_ONLY = True if nobody should act.",
                    id="bullpen.W011",
                )
            )
    if read == OPEN_READS and not settings.DEBUG:
        found.append(
            Warning(
                "Bullpen is readable by anyone who reaches it (READ_ACCESS is "
                "dashboard.access.anyone): job data, errors and return values included.",
                hint="Leave READ_ACCESS at its default (staff with bullpen.view, or basic-auth "
                "users) or restrict the URL at the proxy. If intended (a wall screen on a "
                "private network), add 'bullpen.W012' to SILENCED_SYSTEM_CHECKS.",
                id="bullpen.W012",
            )
        )
    return found


def _clear_text_credentials(config: Mapping[str, Any]) -> list[CheckMessage]:
    basic = bool(config["BASIC_AUTH_USERS"] or config["BASIC_AUTH_PLAIN"])
    https = getattr(settings, "SECURE_SSL_REDIRECT", False) or getattr(
        settings, "SECURE_PROXY_SSL_HEADER", None
    )
    if not basic or settings.DEBUG or https:
        return []
    return [
        Warning(
            "Basic-auth users are configured but nothing makes this site HTTPS-only: basic "
            "credentials cross the network readable by anyone on the way.",
            hint="Serve over HTTPS and set SECURE_SSL_REDIRECT = True (and "
            "SECURE_PROXY_SSL_HEADER behind a TLS-terminating proxy).",
            id="bullpen.W010",
        )
    ]


@register(TAG)
def check_login_url(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A signed-out visitor is sent to ``LOGIN_URL``: a page that does not exist strands them.

    Django's default, ``/accounts/login/``, exists only where the site routes
    ``django.contrib.auth.urls``; a fresh ``startproject`` has the admin's login alone.
    """
    config = _config()
    if config is None or config["READ_ACCESS"] != DEFAULT_READER or not _session_login():
        return []
    login_url = str(settings.LOGIN_URL)
    if _resolves(login_url):
        return []
    return [
        Warning(
            f"LOGIN_URL = {login_url!r} names no page of this site: signed-out visitors "
            "and Sign out land on a 404.",
            hint="Set LOGIN_URL to the site's login page, or to 'admin:login' (the admin's "
            "login, which lets staff in), or route django.contrib.auth.urls at /accounts/.",
            id="bullpen.W020",
        )
    ]


def _resolves(login_url: str) -> bool:
    """Whether ``login_url`` (a URL name, a path or an absolute URL) reaches a view here."""
    from urllib.parse import urlsplit

    from django.urls import NoReverseMatch, Resolver404, get_script_prefix, resolve, reverse

    parts = urlsplit(login_url)
    if parts.scheme or parts.netloc:
        return True  # another site's login: nothing here to look into
    if not login_url.startswith("/"):
        try:
            reverse(login_url)
        except NoReverseMatch:
            return False
        return True
    path = parts.path
    prefix = get_script_prefix()
    if prefix != "/" and path.startswith(prefix):
        path = "/" + path[len(prefix) :]
    try:
        match = resolve(path)
    except Resolver404:
        return False
    # Bullpen's own catch-all answers every path under its mount, with a 404.
    return match.view_name != "bullpen:not-found"
