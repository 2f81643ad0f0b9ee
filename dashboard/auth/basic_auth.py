"""HTTP basic credentials: parsing the header and checking a password against configured users.

``BASIC_AUTH_USERS`` maps names to Django password hashes (``make_password``); the standalone
site may instead give ``BASIC_AUTH_PLAIN`` from its environment, hashed here once per process.
Every check runs the password hasher exactly once, whether the name exists or not: an unknown
name is checked against a hash of a random password, so answers take as long for a known name
as for an unknown one and do not tell which names exist. The hashers compare in constant time.

Who calls :func:`check` is :mod:`dashboard.auth.backend` (through Django's ``authenticate()``,
so that django-axes counts and throttles every attempt), or :mod:`dashboard.auth.basic_sign_in`
directly on a site without that backend.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from functools import cache
from typing import Any

from django.contrib.auth.hashers import check_password, make_password
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.crypto import salted_hmac

from queues.config.settings import get_config

# The name the Sign out script sends so that the browser remembers wrong credentials. It is
# never a user, and never checked, so a signed-out browser's requests cost no password hash.
SIGNED_OUT = "bullpen-signed-out"


def parse(header: str | None) -> tuple[str, str] | None:
    """``Authorization: Basic <base64 user:pass>`` → (user, password), or None."""
    if not header:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, sep, password = decoded.partition(":")
    return (username, password) if sep else None


def configured() -> bool:
    config = get_config()
    return bool(config.get("BASIC_AUTH_USERS") or config.get("BASIC_AUTH_PLAIN"))


@cache
def _hashes() -> tuple[dict[str, str], str]:
    """Every user's password hash, and the hash unknown names are checked against.

    Made together, on the first check: that check costs the same whichever name it is for.
    """
    config = get_config()
    hashes: dict[str, str] = {
        name: make_password(plain) for name, plain in (config.get("BASIC_AUTH_PLAIN") or {}).items()
    }
    hashes.update(config.get("BASIC_AUTH_USERS") or {})
    return hashes, make_password(secrets.token_urlsafe(32))


def credential_mark(username: str) -> str | None:
    """A short mark of ``username``'s configured password (its hash, or the plain text the
    standalone site gives), keyed by the site's secret: equal in every process, different once
    the password changes, and telling nothing about it. None for a user not configured."""
    config = get_config()
    stored = (config.get("BASIC_AUTH_USERS") or {}).get(username)
    if stored is None:
        stored = (config.get("BASIC_AUTH_PLAIN") or {}).get(username)
    if stored is None:
        return None
    return salted_hmac(_MARK_SALT, f"{username}\x00{stored}").hexdigest()[:24]


_MARK_SALT = "bullpen.basic-auth.credential-mark"


def check(username: str, password: str) -> bool:
    """Whether ``password`` is ``username``'s: one run of the password hasher either way."""
    if username == SIGNED_OUT:
        return False
    hashes, unknown = _hashes()
    encoded = hashes.get(username)
    if encoded is None:
        check_password(password, unknown)  # the work of a known name, and its answer dropped
        return False
    return bool(check_password(password, encoded))


@receiver(setting_changed)
def _forget_hashes(*, setting: str, **kwargs: Any) -> None:
    # Users come from BULLPEN; the hash of a plain password depends on the hashers.
    if setting in ("BULLPEN", "PASSWORD_HASHERS"):
        _hashes.cache_clear()
