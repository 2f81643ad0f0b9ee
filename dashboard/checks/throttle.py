"""System checks of the throttling of basic credentials: whether guesses are counted and
refused after too many failures (django-axes in front of Bullpen's authentication backend).

A site without basic-auth users has nothing to throttle here, and is never warned. A site with
them keeps working without axes, unthrottled, and ``bullpen.W017`` says so.
"""

from __future__ import annotations

from inspect import signature
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import load_backend
from django.core.checks import CheckMessage, Warning, register

from dashboard.auth import backend as auth_backend
from dashboard.auth import basic_auth
from dashboard.auth.axes_gate import AXES_BACKEND, is_axes
from dashboard.checks.mounting import TAG, usable_config

_SETUP = (
    f"Install django-axes, add 'axes' to INSTALLED_APPS and "
    f"'axes.middleware.AxesMiddleware' to MIDDLEWARE, and list {AXES_BACKEND!r} then "
    f"{auth_backend.PATH!r} first in AUTHENTICATION_BACKENDS (docs/security.md)."
)


@register(TAG)
def check_throttling(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if usable_config() is None:
        return []  # unusable settings: check_settings says why
    if not basic_auth.configured():
        return []
    backends = list(settings.AUTHENTICATION_BACKENDS)
    if auth_backend.PATH not in backends:
        return [_unthrottled(f"{auth_backend.PATH!r} is not in AUTHENTICATION_BACKENDS")]
    before = backends[: backends.index(auth_backend.PATH)]
    found: list[CheckMessage] = []
    if not apps.is_installed("axes") or not getattr(settings, "AXES_ENABLED", True):
        found.append(_unthrottled("django-axes is not installed and enabled"))
    elif not any(is_axes(path) for path in before):
        found.append(_unthrottled(f"no axes backend is listed before {auth_backend.PATH!r}"))
    for path in before:
        if not is_axes(path) and _takes_basic_credentials(path):
            found.append(
                Warning(
                    f"{path!r} is listed before {auth_backend.PATH!r}, so it checks basic "
                    "credentials against the site's users first: a second password hash per "
                    "attempt, and a dashboard user whose name and password match a site "
                    "user's is refused.",
                    hint=f"List {auth_backend.PATH!r} right after axes' backend, before the "
                    "site's own backends.",
                    id="bullpen.W018",
                )
            )
    return found


def _unthrottled(why: str) -> CheckMessage:
    return Warning(
        f"Basic credentials are checked without throttling ({why}): a client can guess "
        "passwords as fast as the server answers, and nothing locks it out.",
        hint=_SETUP,
        id="bullpen.W017",
    )


def _takes_basic_credentials(path: str) -> bool:
    """Whether Django's ``authenticate()`` would call this backend with basic credentials."""
    try:
        backend = load_backend(path)
    except ImportError:
        return False  # Django says so itself when it signs anyone in
    try:
        signature(backend.authenticate).bind(None, username="", password="", bullpen_basic=True)
    except TypeError:
        return False
    return True
