"""The websocket ticket a basic-auth reader's page carries: it names that user only while it is
genuine, fresh, and the user is still configured."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth.hashers import make_password
from django.core import signing
from django.test import override_settings

from dashboard.auth import basic_auth
from dashboard.auth.principal import ANONYMOUS, Principal, from_scope
from dashboard.live import ws_ticket


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
    assert await from_scope(scope(fresh)) == Principal("operator", "basic")
    with override_settings(BULLPEN={**bullpen_settings, "BASIC_AUTH_PLAIN": {}}):
        assert await from_scope(scope(fresh)) == ANONYMOUS  # the user was removed


async def test_a_password_change_voids_the_tickets_issued_before(
    bullpen_settings: dict[str, Any],
) -> None:
    ticket = ws_ticket.issue(Principal("operator", "basic"))
    changed = {**bullpen_settings, "BASIC_AUTH_PLAIN": {"operator": "a-new-pass-1"}}
    with override_settings(BULLPEN=changed):
        assert await from_scope(scope(ticket)) == ANONYMOUS
        renewed = ws_ticket.issue(Principal("operator", "basic"))
        assert await from_scope(scope(renewed)) == Principal("operator", "basic")
    # Hashed passwords (BASIC_AUTH_USERS) the same; and changed back, the old ticket holds.
    hashed = {**bullpen_settings, "BASIC_AUTH_PLAIN": {}}
    hashed["BASIC_AUTH_USERS"] = {"operator": make_password("s3cret-pass")}
    with override_settings(BULLPEN=hashed):
        first = ws_ticket.issue(Principal("operator", "basic"))
        assert await from_scope(scope(first)) == Principal("operator", "basic")
        assert await from_scope(scope(ticket)) == ANONYMOUS
        hashed["BASIC_AUTH_USERS"] = {"operator": make_password("s3cret-pass")}  # a new salt
        with override_settings(BULLPEN=hashed):
            assert await from_scope(scope(first)) == ANONYMOUS
    assert await from_scope(scope(ticket)) == Principal("operator", "basic")
    # A ticket naming only its user (issued before tickets carried a mark) lets nobody in.
    legacy = signing.dumps("operator", salt="bullpen.websocket-ticket", compress=False)
    assert await from_scope(scope(legacy)) == ANONYMOUS


def ticket_for(username: str, age: float = 0) -> str:
    """A ticket as ``ws_ticket.issue`` makes it, issued ``age`` seconds ago."""
    mark = basic_auth.credential_mark(username)
    signer = signing.TimestampSigner(salt="bullpen.websocket-ticket")
    signer.timestamp = lambda: signing.b62_encode(int(time.time() - age))  # type: ignore[method-assign]
    return signer.sign_object([username, mark], compress=False)
