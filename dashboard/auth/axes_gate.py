"""Whether django-axes holds a client locked out, asked before anything else about its
credentials: a locked-out client is refused whatever it sends, so that its answers say
nothing about the password (not even what anyone else signed in with a moment ago)."""

from __future__ import annotations

from functools import cache

from django.apps import apps
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils.module_loading import import_string

from dashboard.auth import backend

AXES_BACKEND = "axes.backends.AxesStandaloneBackend"


def locked_out(request: HttpRequest, username: str) -> bool:
    """Whether axes refuses ``username`` from this request's client (its address as axes
    reads it). Runs a database query: call it from a thread, as Django's auth does."""
    if not guarding(tuple(settings.AUTHENTICATION_BACKENDS)):
        return False
    # django-axes is optional: imported once it is known to be installed and guarding.
    from axes.handlers.proxy import AxesProxyHandler
    from axes.helpers import get_credentials

    return not AxesProxyHandler.is_allowed(request, get_credentials(username=username))


@cache
def guarding(backends: tuple[str, ...]) -> bool:
    """Whether axes stands in front of Bullpen's backend (``bullpen.W017`` says when not)."""
    if backend.PATH not in backends:
        return False
    if not apps.is_installed("axes") or not getattr(settings, "AXES_ENABLED", True):
        return False
    before = backends[: backends.index(backend.PATH)]
    return any(is_axes(path) for path in before)


def is_axes(path: str) -> bool:
    """Whether ``path`` names axes' authentication backend (or one of its own)."""
    try:
        found = import_string(path)
        axes_backend = import_string(AXES_BACKEND)
    except ImportError:
        return False
    return isinstance(found, type) and issubclass(found, axes_backend)


@receiver(setting_changed)
def _forget(*, setting: str, **kwargs: object) -> None:
    if setting in ("AUTHENTICATION_BACKENDS", "INSTALLED_APPS") or setting.startswith("AXES_"):
        guarding.cache_clear()
