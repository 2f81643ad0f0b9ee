"""Bullpen's basic-auth users as a Django authentication backend.

Basic credentials are checked through Django's ``authenticate()`` with this backend, so that
whatever watches sign-ins sees every attempt: django-axes (its backend listed before this one)
refuses a client locked out before any password is hashed, and counts each failure through
Django's ``user_login_failed`` signal. List it after axes' backend and before the site's own::

    AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "dashboard.auth_backend.BasicAuthBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]

It answers only calls that pass ``bullpen_basic=True`` (the site's login forms never do, so
they never reach it), and it ends the call on a wrong password: the site's user table never
sees dashboard credentials. It signs nobody into a session; the user it returns lives for
one request.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from dashboard.auth import basic_auth

PATH = "dashboard.auth_backend.BasicAuthBackend"


class BasicUser:
    """Who sent valid basic credentials: a name from ``BASIC_AUTH_USERS`` (no database row)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    backend = PATH  # authenticate() sets it too

    def __init__(self, username: str) -> None:
        self.username = username

    def get_username(self) -> str:
        return self.username


class BasicAuthBackend:
    def authenticate(
        self,
        request: HttpRequest | None,
        *,
        username: str,
        password: str,
        bullpen_basic: bool,
    ) -> BasicUser:
        if request is not None:
            # The password was checked on this attempt (a locked-out one never gets here).
            request.bullpen_password_checked = True  # type: ignore[attr-defined]
        if bullpen_basic and basic_auth.check(username, password):
            return BasicUser(username)
        # Stop here: no later backend (the site's users) checks dashboard credentials, and
        # Django reports the failure to user_login_failed's receivers (axes counts it).
        raise PermissionDenied

    def get_user(self, user_id: object) -> None:
        return None  # never in a session
