"""HTTP basic credentials: parsing the header and checking it against configured users.

``BASIC_AUTH_USERS`` maps names to Django password hashes (``make_password``); the standalone
site may instead give ``BASIC_AUTH_PLAIN`` from its environment. Unknown names cost the same
work as known ones, and comparisons are constant-time. A successful check is remembered for a
few minutes (by a hash of the header), so a script acting on many jobs does not pay a password
hash per request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time

from asgiref.sync import sync_to_async
from django.contrib.auth.hashers import check_password, make_password

from queues.conf import get_config

_REMEMBER_SECONDS = 300
_remembered: dict[str, tuple[str, float]] = {}
_DUMMY_PLAIN = "bullpen-dummy-password-for-unknown-users"
# The name the Sign out script sends so that the browser remembers wrong credentials. It is
# never a user, so a signed-out browser's requests cost no password hash.
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


def _check_sync(username: str, password: str) -> bool:
    config = get_config()
    hashed: dict[str, str] = config.get("BASIC_AUTH_USERS") or {}
    plain: dict[str, str] = config.get("BASIC_AUTH_PLAIN") or {}
    if username in plain:
        return hmac.compare_digest(plain[username].encode(), password.encode())
    if username in hashed:
        return bool(check_password(password, hashed[username]))
    # Same cost for a name that does not exist: no user enumeration by timing.
    hmac.compare_digest(_DUMMY_PLAIN.encode(), password.encode())
    make_password(password)
    return False


async def verify(username: str, password: str) -> bool:
    if username == SIGNED_OUT:
        return False
    key = hashlib.sha256(f"{username}\x00{password}".encode()).hexdigest()
    now = time.monotonic()
    remembered = _remembered.get(key)
    if remembered and remembered[0] == username and remembered[1] > now:
        return True
    ok = await sync_to_async(_check_sync, thread_sensitive=False)(username, password)
    if ok:
        if len(_remembered) > 1000:
            _remembered.clear()
        _remembered[key] = (username, now + _REMEMBER_SECONDS)
    return ok


def configured() -> bool:
    config = get_config()
    return bool(config.get("BASIC_AUTH_USERS") or config.get("BASIC_AUTH_PLAIN"))
