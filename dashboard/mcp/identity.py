"""Who the MCP server is: ``BULLPEN["MCP"]["USER"]`` (``mcp`` by default), whose queues are
those ``QUEUE_ACCESS`` gives that name, its ``SCOPES``, and, when a Django user of that name
exists, its groups and permissions. Its actions are audited under that name, ``via`` ``mcp``.

An assistant on stdio runs with the rights of whoever started it (the settings, the database
and Redis are theirs): ``READ_ACCESS`` and ``WRITE_ACCESS``, which judge HTTP requests, do not
apply; ``QUEUE_ACCESS``, read-only and the ``ACTIONS`` switch do.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from dashboard.auth.identity import Principal
from dashboard.auth.queue_access import QueueAccess, for_principal
from queues.config.settings import DEFAULTS, get_config


def mcp_config() -> dict[str, Any]:
    return {**DEFAULTS["MCP"], **(get_config().get("MCP") or {})}


def actions_enabled() -> bool:
    mcp = mcp_config()
    return mcp.get("ACTIONS") is True


async def mcp_principal() -> Principal:
    mcp = mcp_config()
    username = str(mcp.get("USER") or "mcp")
    user = await get_user_model().objects.filter(username=username, is_active=True).afirst()
    return Principal(username, "mcp", user)


async def mcp_access() -> tuple[Principal, QueueAccess]:
    principal = await mcp_principal()
    return principal, await for_principal(principal)
