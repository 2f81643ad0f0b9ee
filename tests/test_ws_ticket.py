"""The websocket ticket a basic-auth reader's page carries: it names that user only while it is
genuine, fresh, and the user is still configured."""

from __future__ import annotations

import time
from typing import Any

from django.core import signing
from django.test import override_settings

from dashboard import ws_ticket
from dashboard.principal import ANONYMOUS, Principal, from_scope


def scope(ticket: str, **extra: Any) -> dict[str, Any]:
    return {"headers": [], "query_string": f"ticket={ticket}".encode(), **extra}


async def test_a_ticket_lets_its_user_in() -> None:
    ticket = ws_ticket.issue(Principal("operator", "basic"))
    assert await from_scope(scope(ticket)) == Principal("operator", "basic")
    assert ws_ticket.issue(ANONYMOUS) == ""  # session users' cookies go with the handshake


async def test_forged_stale_or_orphaned_tickets_let_nobody_in(
    bullpen_settings: dict[str, Any],
) -> None:
    forged = signing.dumps("operator", salt="another-salt")
    assert await from_scope(scope(forged)) == ANONYMOUS
    assert await from_scope(scope(ticket_for("operator") + "x")) == ANONYMOUS
    stale = ticket_for("operator", age=ws_ticket.MAX_AGE + 60)
    assert await from_scope(scope(stale)) == ANONYMOUS
    fresh = ticket_for("operator")
    with override_settings(BULLPEN={**bullpen_settings, "BASIC_AUTH_PLAIN": {}}):
        assert await from_scope(scope(fresh)) == ANONYMOUS  # the user was removed


def ticket_for(username: str, age: float = 0) -> str:
    signer = signing.TimestampSigner(salt="bullpen.websocket-ticket")
    signer.timestamp = lambda: signing.b62_encode(int(time.time() - age))  # type: ignore[method-assign]
    return signer.sign_object(username, compress=False)
