"""System checks: each thing a host site can forget or get wrong, and the message it gets."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.hashers import make_password
from django.core.checks import CheckMessage, run_checks
from django.core.handlers.asgi import ASGIHandler
from django.test import override_settings
from django.urls import path

from dashboard.checks import access_settings, mounting, redis_reachable, websocket
from dashboard.live.consumers import LiveConsumer
from dashboard.routing import find_live_routes, websocket_route
from queues.config.settings import DEFAULTS
from queues.redis.urls import redact
from tests.support.servers.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]
HOST_STACK = "tests.site.test_checks.host_stack"


def ids(messages: Iterable[CheckMessage]) -> list[str]:
    return sorted(str(m.id) for m in messages)


def bullpen(**overrides: Any) -> override_settings:
    """BULLPEN as a host site writes it: the defaults (staff login) plus ``overrides``."""
    return override_settings(BULLPEN={"PREFIX": "bull", **overrides})


# ASGI applications the route check is pointed at (ASGI_APPLICATION = "tests.test_checks.…").
async def _opaque(scope: Any, receive: Any, send: Any) -> None:
    raise NotImplementedError


host_stack = ProtocolTypeRouter(
    {
        "http": ASGIHandler(),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter([websocket_route()]))
        ),
    }
)
http_only = ProtocolTypeRouter({"http": ASGIHandler()})
bare_route = ProtocolTypeRouter({"websocket": URLRouter([websocket_route()])})
bare_consumer = ProtocolTypeRouter(
    {"websocket": URLRouter([path("ws/bullpen/", LiveConsumer.as_asgi())])}
)
nested_route = ProtocolTypeRouter(
    {
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(
                URLRouter([path("ops/", URLRouter([path("live/", LiveConsumer.as_asgi())]))])
            )
        )
    }
)
opaque = ProtocolTypeRouter({"websocket": _opaque})


def test_checks_are_registered_with_the_app() -> None:
    with override_settings(BULLPEN={"PREFIXES": []}):
        assert "bullpen.E011" in ids(run_checks(tags=["bullpen"]))


def test_standalone_site_routes_the_websocket() -> None:
    # tests.settings point at bullpen_site.asgi, the standalone site's application.
    assert websocket.check_websocket_route() == []
    search = find_live_routes(host_stack)
    assert [route.path for route in search.routes] == ["/ws/bullpen/"] and not search.opaque


@pytest.mark.parametrize(
    ("asgi", "expected"),
    [
        (None, ["bullpen.E004"]),
        ("tests.site.test_checks.no_such_application", ["bullpen.E005"]),
        ("tests.site.test_checks.http_only", ["bullpen.E006"]),
        ("tests.site.test_checks.opaque", ["bullpen.W004"]),
        (HOST_STACK, []),
    ],
)
def test_websocket_route_is_found_or_reported(asgi: str | None, expected: list[str]) -> None:
    with bullpen(), override_settings(ASGI_APPLICATION=asgi):
        found = websocket.check_websocket_route()
    assert ids(found) == expected
    for message in found:
        assert message.hint, message


def test_unimportable_application_says_why() -> None:
    with override_settings(ASGI_APPLICATION="tests.site.test_checks.no_such_application"):
        (message,) = websocket.check_websocket_route()
    assert "no_such_application" in message.msg


def test_route_elsewhere_than_the_pages_connect_to() -> None:
    with bullpen(), override_settings(ASGI_APPLICATION="tests.site.test_checks.nested_route"):
        (message,) = websocket.check_websocket_route()
    assert message.id == "bullpen.W005" and "'/ops/live/'" in message.msg
    with (
        bullpen(WEBSOCKET_PATH="/ops/live/"),
        override_settings(ASGI_APPLICATION="tests.site.test_checks.nested_route"),
    ):
        assert websocket.check_websocket_route() == []


def test_route_helper_follows_websocket_path() -> None:
    with bullpen(WEBSOCKET_PATH="/ops/queues/ws/"):
        assert str(websocket_route().pattern) == "ops/queues/ws/"
        with override_settings(ASGI_APPLICATION=HOST_STACK):
            # host_stack was built with the default path: the pages would miss it.
            assert ids(websocket.check_websocket_route()) == ["bullpen.W005"]


def test_route_without_session_auth_or_origin_check() -> None:
    # websocket_route() checks the origin itself (scheme, host and port).
    with bullpen(), override_settings(ASGI_APPLICATION="tests.site.test_checks.bare_route"):
        assert ids(websocket.check_websocket_route()) == ["bullpen.W006"]
    with bullpen(), override_settings(ASGI_APPLICATION="tests.site.test_checks.bare_consumer"):
        assert ids(websocket.check_websocket_route()) == ["bullpen.W006", "bullpen.W007"]
    # Open reads need no session on the socket; the origin check still matters.
    with (
        bullpen(READ_ACCESS="dashboard.access.anyone"),
        override_settings(ASGI_APPLICATION="tests.site.test_checks.bare_consumer"),
    ):
        assert ids(websocket.check_websocket_route()) == ["bullpen.W007"]


def test_channel_layer() -> None:
    assert websocket.check_channel_layer() == []
    for layers in ({}, {"other": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}):
        with override_settings(CHANNEL_LAYERS=layers):
            assert ids(websocket.check_channel_layer()) == ["bullpen.W008"]


def test_redis_is_probed_by_check_deploy_only() -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    with bullpen(REDIS_URL=closed):
        # What migrate and runserver run: no connection, so no warning about it.
        assert "bullpen.W009" not in ids(run_checks(tags=["bullpen"]))
        deploy = ids(run_checks(tags=["bullpen"], include_deployment_checks=True))
    assert "bullpen.W009" in deploy


def test_redis_reachable_or_a_warning(redis_server: RedisServer) -> None:
    with bullpen(REDIS_URL=redis_server.url):
        assert redis_reachable.check_redis() == []
    closed = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    # TLS against a plain-text server fails in the handshake: still a warning, not a crash.
    tls = f"rediss://127.0.0.1:{redis_server.port}/0"
    for url in (closed, tls, "unix:///nonexistent/redis.sock"):
        with bullpen(REDIS_URL=url):
            (message,) = redis_reachable.check_redis()
        assert message.id == "bullpen.W009" and "unreachable" in message.msg
        assert "hunter2" not in message.msg
    assert redact(closed).startswith("redis://:***@127.0.0.1:")


def test_basic_auth_without_https() -> None:
    users = {"BASIC_AUTH_USERS": {"ops": make_password("long-secret")}}
    with bullpen(**users), override_settings(DEBUG=False, SECURE_SSL_REDIRECT=False):
        assert ids(access_settings.check_access()) == ["bullpen.W010"]
    https: list[dict[str, Any]] = [
        {"SECURE_SSL_REDIRECT": True},
        {"SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https")},
        {"DEBUG": True},
    ]
    for extra in https:
        with bullpen(**users), override_settings(**extra):
            assert access_settings.check_access() == [], extra
    with bullpen(), override_settings(DEBUG=False):  # no basic auth: nothing to leak
        assert access_settings.check_access() == []


NO_SESSION_LOGIN = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
]


def test_nobody_can_sign_in() -> None:
    with bullpen(), override_settings(MIDDLEWARE=NO_SESSION_LOGIN):
        (message,) = access_settings.check_access()
    assert message.id == "bullpen.W011" and "Nobody can open Bullpen" in message.msg
    # Reads open to all, actions to nobody: read-only in effect, and said so.
    with (
        bullpen(READ_ACCESS="dashboard.access.anyone"),
        override_settings(MIDDLEWARE=NO_SESSION_LOGIN, DEBUG=True),
    ):
        (message,) = access_settings.check_access()
    assert message.id == "bullpen.W011" and "read-only in effect" in message.msg
    # Read-only on purpose: nothing to say about acting.
    with (
        bullpen(READ_ACCESS="dashboard.access.anyone", READ_ONLY=True),
        override_settings(MIDDLEWARE=NO_SESSION_LOGIN, DEBUG=True),
    ):
        assert access_settings.check_access() == []
    # Basic-auth users can sign in without sessions (served over HTTPS here).
    with (
        bullpen(BASIC_AUTH_USERS={"ops": make_password("long-secret")}),
        override_settings(MIDDLEWARE=NO_SESSION_LOGIN, SECURE_SSL_REDIRECT=True),
    ):
        assert access_settings.check_access() == []


def test_reads_open_to_anyone_in_production() -> None:
    with bullpen(READ_ACCESS="dashboard.access.anyone"), override_settings(DEBUG=False):
        assert ids(access_settings.check_access()) == ["bullpen.W012"]
    with bullpen(READ_ACCESS="dashboard.access.anyone"), override_settings(DEBUG=True):
        assert access_settings.check_access() == []


def test_access_callables_must_import() -> None:
    with bullpen(READ_ACCESS="dashboard.access.nobody_here", WRITE_ACCESS="no.such.module"):
        found = access_settings.check_access()
    assert ids(found) == ["bullpen.E007", "bullpen.E007"]
    assert "staff_or_basic_reader" in str(found[0].hint)


def test_basic_auth_users_hold_hashes_not_passwords() -> None:
    with bullpen(BASIC_AUTH_USERS={"ops": "plain-password"}), override_settings(DEBUG=True):
        (message,) = access_settings.check_access()
    assert message.id == "bullpen.E008" and "'ops'" in message.msg
    assert "plain-password" not in message.msg


@pytest.mark.unit
@pytest.mark.parametrize(
    ("bullpen_setting", "expected", "words"),
    [
        ({"REDIS_ULR": "redis://x"}, ["bullpen.W013"], "Did you mean 'REDIS_URL'"),
        ({"PREFIXES": []}, ["bullpen.E011"], "non-empty list"),
        ({"PREFIXES": "bull"}, ["bullpen.E011"], "non-empty list"),
        ({"PREFIX": "a", "PREFIXES": ["b"]}, ["bullpen.W014"], "PREFIX is ignored"),
        ({"QUEUES": ["mail:out"]}, ["bullpen.E012"], "cannot contain ':'"),
        ({"QUEUES": [""]}, ["bullpen.E012"], "non-empty"),
        ({"QUEUE_OPTIONS": {"mail:out": {}}}, ["bullpen.W015"], "'mail' is not one of PREFIXES"),
        ({"MIN_PAGE_SIZE": 60}, ["bullpen.E013"], "DEFAULT_PAGE_SIZE 50"),
        ({"MAX_PAGE_SIZE": "300"}, ["bullpen.E013"], "whole numbers"),
        ({"REDIS_URL": "http://cache:6379"}, ["bullpen.E014"], "rediss://"),
        ({"WEBSOCKET_PATH": "ws/bullpen"}, ["bullpen.E014"], "starting and ending"),
        ({"REDIS_TIMEOUT": 0}, ["bullpen.E014"], "above 0"),
        ({"REDACT": "data.password"}, ["bullpen.E016"], "list of field paths"),
        ({"REDACT": ["password"]}, ["bullpen.E016"], "must start with one of: data"),
        ({"REDACT": ["data..token"]}, ["bullpen.E016"], "empty segment"),
        ({"REDACT": ["data.a**"]}, ["bullpen.E016"], "segment of its own"),
        ({"LIVE": {"count_interval": 1}}, ["bullpen.W016"], "counts_interval"),
        ({"ACTIONS": {"batch": 10}}, ["bullpen.W016"], "batch_size"),
        ({"ALERTS": {"failed": 5}}, ["bullpen.W016"], "failed_last_hour"),
        ({"WORKER": {"dead_letters": "dl"}}, ["bullpen.W016"], "dead_letter_queue"),
        ({"QUEUE_OPTIONS": {"mail": {"name": "Mail"}}}, ["bullpen.W016"], "display_name"),
        (
            {"QUEUE_OPTIONS": {"mail": {"alerts": {"wait": 1}}}},
            ["bullpen.W016"],
            "['mail']['alerts']",
        ),
        ({"QUEUE_OPTIONS": {"mail": "Mail"}}, ["bullpen.E014"], "must be a dict"),
        ({"QUEUE_OPTIONS": {"mail": {"alerts": [1]}}}, ["bullpen.E014"], "must be a dict"),
        ({"ALERTS": {"waiting": "lots"}}, ["bullpen.E014"], "or None (off)"),
        ({"QUEUE_OPTIONS": {"mail": {"alerts": {"delayed": -1}}}}, ["bullpen.E014"], "0 or more"),
        ({"SEARCH_BUDGET": 0}, ["bullpen.E014"], "above 0"),
        ({"SEARCH_FIELD_CAP": "16k"}, ["bullpen.E014"], "above 0"),
        ({"METRICS_DURATION_SAMPLE": -1}, ["bullpen.E014"], "0 or more"),
        ({"METRICS_TOKEN": 1234}, ["bullpen.E014"], "must be a string"),
        ({"LIVE_KEY_PREFIX": ""}, ["bullpen.E014"], "non-empty string"),
        ({"READ_ONLY": "yes"}, ["bullpen.E014"], "True or False"),
        ({"ALERTS": {"EMAIL_TO": "ops@example.com"}}, ["bullpen.E014"], "list of e-mail"),
        ({"ALERTS": {"WEBHOOKS": ["ftp://hooks.example"]}}, ["bullpen.E014"], "https:// URLs"),
        ({"ALERTS": {"COOLDOWN": -1}}, ["bullpen.E014"], "seconds, 0 or more"),
        ({"ALERTS": {"INTERVAL": 0}}, ["bullpen.E014"], "seconds above 0"),
        ({"ALERTS": {"LINK_BASE": "ops.example.com"}}, ["bullpen.E014"], "public origin"),
        ({"ALERTS": {"failure_rate_percent": 120}}, ["bullpen.E014"], "from 0 to 100"),
        ({"ALERTS": {"run_p95_ms": "slow"}}, ["bullpen.E014"], "or None (off)"),
        (
            {"QUEUE_OPTIONS": {"mail": {"alerts": {"no_workers_seconds": -5}}}},
            ["bullpen.E014"],
            "0 or more",
        ),
        ({"ALERTS": {"RATE_WINDOW": 30}}, ["bullpen.E014"], "seconds from 60 to 86400"),
        ({"ALERTS": {"RATE_MIN_JOBS": 2.5}}, ["bullpen.E014"], "whole number of jobs"),
        ({"ALERTS": {"RENOTIFY": "hourly"}}, ["bullpen.E014"], "0 (never) or more"),
        ({"ALERTS": {"stalled": 1}}, ["bullpen.W016"], "stalled_last_hour"),
        ({"ALERTS": {"WEBHOOKS": ["https://hooks.example/T1"]}}, ["bullpen.W019"], "LINK_BASE"),
    ],
)
def test_settings_validation(
    bullpen_setting: dict[str, Any], expected: list[str], words: str
) -> None:
    with override_settings(BULLPEN={"PREFIXES": ["bull"], **bullpen_setting}):
        found = mounting.check_settings()
    assert ids(found) == expected
    assert words in f"{found[0].msg} {found[0].hint}"


@pytest.mark.unit
def test_alert_delivery_settings_are_fine() -> None:
    delivery = {
        "EMAIL_TO": ["ops@example.com", "oncall@example.com"],
        "WEBHOOKS": ["https://hooks.slack.com/services/T0/B0/x", "http://10.0.0.5:9000/hook"],
        "COOLDOWN": 600,
        "INTERVAL": 15,
        "LINK_BASE": "https://ops.example.com",
        "waiting": 100,
        "failure_rate_percent": 12.5,
        "scheduler_overdue_seconds": None,
        "RATE_WINDOW": 600,
        "RATE_MIN_JOBS": 50,
        "RENOTIFY": 3600,
    }
    with override_settings(BULLPEN={"PREFIXES": ["bull"], "ALERTS": delivery}):
        assert mounting.check_settings() == []


@pytest.mark.unit
def test_queues_under_other_prefixes_are_fine() -> None:
    with override_settings(
        BULLPEN={"PREFIXES": ["bull", "{eu}"], "QUEUES": ["email", "{eu}:email"]}
    ):
        assert mounting.check_settings() == []


def test_a_broken_settings_dict_does_not_break_the_other_checks() -> None:
    with override_settings(BULLPEN="redis://oops"):
        assert ids(run_checks(tags=["bullpen"])) == ["bullpen.E010"]
    with override_settings(BULLPEN={"REDIS_TIMEOUT": "soon"}):
        assert ids(run_checks(tags=["bullpen"])) == ["bullpen.E014"]


def test_installed_apps() -> None:
    from django.conf import settings

    assert mounting.check_installed_apps() == []
    trimmed = [
        app for app in settings.INSTALLED_APPS if app not in ("daphne", "queues", "django_htmx")
    ]
    with override_settings(INSTALLED_APPS=trimmed):
        assert ids(mounting.check_installed_apps()) == [
            "bullpen.E003",
            "bullpen.W001",
            "bullpen.W003",
        ]
    late = [app for app in settings.INSTALLED_APPS if app != "daphne"] + ["daphne"]
    with override_settings(INSTALLED_APPS=late):
        assert ids(mounting.check_installed_apps()) == ["bullpen.W002"]


@pytest.mark.unit
def test_every_setting_is_documented() -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^### `([A-Z_]+)`", reference, re.MULTILINE))
    assert set(DEFAULTS) <= documented, sorted(set(DEFAULTS) - documented)
    from queues.live.settings import LiveSettings

    for key in LiveSettings.__dataclass_fields__:
        assert f"`{key}`" in reference, key


def test_every_check_id_is_listed_once() -> None:
    table = (ROOT / "docs" / "mounting.md").read_text()
    listed = re.findall(r"^\| `bullpen\.([EW]\d{3})` \|", table, re.MULTILINE)
    assert len(listed) == len(set(listed)), sorted(i for i in listed if listed.count(i) > 1)
    # Checks live in several modules of the app (settings, versions, security) and in the settings
    # validators of the BullMQ layer (queues/config/).
    code = "".join(path.read_text() for path in sorted((ROOT / "dashboard").rglob("*.py")))
    code += "".join(path.read_text() for path in sorted((ROOT / "queues" / "config").glob("*.py")))
    used = set(re.findall(r'"bullpen\.([EW]\d{3})"', code))
    used |= set(re.findall(r'Problem\(\s*"([EW]\d{3})"', code))
    assert "W016" in used and "E010" in used  # both ways of naming an id are seen
    assert used == set(listed)
    # One meaning per warning id: each is raised from one place.
    for warning in sorted(i for i in used if i.startswith("W")):
        assert len(re.findall(rf'"(?:bullpen\.)?{warning}"', code)) == 1, warning


def test_login_url_that_names_no_page() -> None:
    # Django's default LOGIN_URL in a site that routes no django.contrib.auth.urls.
    for missing in ("/accounts/login/", "no-such-login", "/queues/accounts/login/"):
        with bullpen(), override_settings(LOGIN_URL=missing):
            (message,) = access_settings.check_login_url()
        assert message.id == "bullpen.W020" and repr(missing) in message.msg
        assert "admin:login" in str(message.hint)
    for usable in ("admin:login", "/admin/login/", "bullpen:sign-in", "https://sso.example/in"):
        with bullpen(), override_settings(LOGIN_URL=usable):
            assert access_settings.check_login_url() == [], usable
    # Nobody is sent to a login page: nothing to say.
    with bullpen(READ_ACCESS="dashboard.access.anyone"), override_settings(LOGIN_URL="/nope/"):
        assert access_settings.check_login_url() == []
    with bullpen(), override_settings(LOGIN_URL="/nope/", MIDDLEWARE=NO_SESSION_LOGIN):
        assert access_settings.check_login_url() == []
