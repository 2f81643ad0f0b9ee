"""The queue page's "Alerts" fragment and the overview's alert entries, on a rule a real Node
worker makes fire: each alert's status and hold, buttons only for those who may act, names
escaped, holds of rules that do not exist left out, nothing for a queue without alerts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from queues.alerts import silences
from tests.alerts.test_alert_rules import record
from tests.support.action_requests import AUTH
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

SECTION = "/queues/q/mail/alerts/"


def _fail_one(peer: Peer) -> None:
    peer("add", "--queue", "mail", "--name", "send", "--data", "{}")
    peer("work", "--queue", "mail", "--count", "1", "--fail")
    peer("add", "--queue", "quiet", "--name", "send", "--data", "{}")


async def test_the_section_lists_each_alert_with_its_hold(client: AsyncClient, peer: Peer) -> None:
    await asyncio.to_thread(_fail_one, peer)
    await silences.acknowledge("mail", "new_failure_signatures", "ann")
    await silences.silence("mail", "waiting", 60, "<b>eve</b>")
    await silences.silence("mail", "no/such-rule", 60, "eve")

    seen = (await client.get(SECTION)).content.decode()
    assert 'data-rule="new_failure_signatures" data-status="acknowledged"' in seen
    assert "1 new failure signature in the last hour, more than 0" in seen
    assert "acknowledged by ann at" in seen
    assert 'data-rule="waiting" data-status="silenced"' in seen
    assert "Not firing now." in seen
    assert "by &lt;b&gt;eve&lt;/b&gt;" in seen and "<b>eve" not in seen
    assert "no/such-rule" not in seen
    assert "<button" not in seen and "<form" not in seen  # an anonymous visitor acts on nothing

    acting = (await client.get(SECTION, headers=AUTH)).content.decode()
    assert 'data-testid="unsilence-alert"' in acting
    assert acting.count('data-testid="silence-alert"') == 1  # the acknowledged one's
    assert 'data-testid="acknowledge-alert"' not in acting  # acknowledged already
    assert acting.count('<option value="60" selected>1 h</option>') == 1

    await silences.unsilence("mail", "waiting")
    await silences.silence("mail", "new_failure_signatures", 15, "bob")
    shown = (await client.get("/queues/api/queues/?problems=1")).json()["queues"]
    (mail,) = [queue for queue in shown if queue["slug"] == "mail"]
    (alert,) = mail["alerts"]
    assert alert["status"] == "silenced"
    assert alert["hold"]["silencedBy"] == "bob" and alert["hold"]["acknowledgedBy"] == "ann"
    assert mail["attention"][0] == "alert: new_failure_signatures (silenced)"

    assert (await client.get("/queues/q/quiet/alerts/", headers=AUTH)).content.strip() == b""


async def test_a_rule_read_from_history_shows_with_its_window(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    """The failure rate over the recorded history fires on the page as the sender decides it;
    a rule whose history was never recorded shows nothing."""

    def run(count: int, *flags: str) -> None:
        peer("add-bulk", "--queue", "img", "--name", "resize", "--count", str(count))
        peer("work", "--queue", "img", "--count", str(count), *flags)

    await asyncio.to_thread(run, 3, "--fail")
    await asyncio.to_thread(run, 5)
    await asyncio.to_thread(peer, "add", "--queue", "shop", "--name", "s", "--data", "{}")
    await record(redis_client)
    alerts = {
        "failure_rate_percent": 20,
        "RATE_MIN_JOBS": 1,
        "RATE_WINDOW": 600,
        "new_failure_signatures": None,
    }
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": alerts}):
        seen = (await client.get("/queues/q/img/alerts/")).content.decode()
        assert 'data-rule="failure_rate_percent" data-status="firing"' in seen
        assert "37.5 % of jobs failed in the last 10 min, more than 20 %" in seen
        assert (await client.get("/queues/q/shop/alerts/")).content.strip() == b""
