"""The standalone site's per-queue access, read from environment text.

``DASHBOARD_USERS="alice:pw-one bob:pw-two"`` adds basic-auth users beside DASHBOARD_USERNAME;
``BASIC_AUTH_SCOPES="alice=tenant42,billing bob=ops"`` gives them scopes; ``QUEUE_ACCESS`` is the
rule list as JSON (``[{"QUEUES": "t0042-*", "VIEW": ["scope:tenant42"]}]``). A value that does
not parse stops the site at start with the variable's name, rather than opening queues.
"""

from __future__ import annotations

import json
from typing import Any


class BadEnvironment(ValueError):
    """An environment variable's value that the site cannot use."""


def users(text: str) -> dict[str, str]:
    """``"alice:pw-one bob:pw-two"`` → ``{"alice": "pw-one", "bob": "pw-two"}``."""
    found: dict[str, str] = {}
    for item in text.split():
        name, sep, password = item.partition(":")
        if not (sep and name and password):
            raise BadEnvironment(f"DASHBOARD_USERS: {name!r} is not <user>:<password>")
        found[name] = password
    return found


def scopes(text: str) -> dict[str, list[str]]:
    """``"alice=tenant42,billing bob=ops"`` → ``{"alice": ["tenant42", "billing"], ...}``."""
    found: dict[str, list[str]] = {}
    for item in text.split():
        name, sep, names = item.partition("=")
        if not (sep and name and names):
            raise BadEnvironment(f"BASIC_AUTH_SCOPES: {item!r} is not <user>=<scope>[,…]")
        found.setdefault(name, []).extend(scope for scope in names.split(",") if scope)
    return found


def rules(text: str) -> Any:
    """QUEUE_ACCESS's JSON, or None when unset (the system check judges its shape)."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as error:
        raise BadEnvironment(f"QUEUE_ACCESS is not JSON: {error}") from None
