"""System checks of who may read and act: the access callables, basic-auth hashes and their
transport, per-queue rules, whether anyone can sign in at all, and where sign-in sends them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from dashboard.checks.mounting import (
    DEFAULT_OPERATOR,
    DEFAULT_READER,
    OPEN_READS,
    TAG,
    usable_config,
)


@register(TAG)
def check_access(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    config = usable_config()
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
    config = usable_config()
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
