"""Silencing and acknowledging alerts through the API, on a rule real Node BullMQ jobs make
fire: no notice while silenced, told once it is unsilenced, no repeats once acknowledged, its
end told and the acknowledgement over; audited, kept in Redis, shown by ``api/alerts/``;
refused without operate permission, under read-only, and for bad input."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.alerts.delivery import deliver
from dashboard.models import AuditEntry
from queues.alerts.silences import holds_key
from queues.alerts.watch import AlertWatch, DeliverySettings
from tests.alerts.test_alert_rules import audited, receiver  # noqa: F401
from tests.support.action_requests import AUTH
from tests.support.live_reads import found_within
from tests.support.peer import Peer
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)

MAIL = "/queues/api/queues/mail/alerts/waiting"
VIEWER = {"Authorization": "Basic " + base64.b64encode(b"vera:look-only").decode()}


async def passes(watch: AlertWatch, count: int) -> int:
    told = 0
    for _ in range(count):
        told += len(await watch.evaluate(DeliverySettings.from_config()))
        await asyncio.sleep(0.1)
    return told


async def test_silence_unsilence_and_acknowledge_an_alert(
    client: AsyncClient,
    peer: Peer,
    receiver: Receiver,  # noqa: F811
    redis_client: Any,
    bullpen_settings: dict[str, Any],
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    alerts = {"waiting": 1, "WEBHOOKS": [f"{receiver.url}/hook"], "COOLDOWN": 0, "RENOTIFY": 0.2}
    watch = AlertWatch(deliver, lambda: True)
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": alerts}):
        silenced = await client.post(f"{MAIL}/silence/", {"minutes": "60"}, headers=AUTH)
        assert silenced.status_code == 200, silenced.content
        until_s = silenced.json()["silencedUntil"]
        assert 3590 < until_s - time.time() <= 3600
        assert await passes(watch, 4) == 0  # firing, silenced: nobody told
        shown = (await client.get("/queues/api/alerts/", headers=AUTH)).json()
        assert shown["alerts"]["mail"][0]["rule"] == "waiting"
        assert shown["held"] == [
            {
                "queue": "mail",
                "rule": "waiting",
                "silencedUntil": until_s,
                "silencedBy": "operator",
                "acknowledgedBy": None,
                "acknowledgedAt": None,
            }
        ]
        stored = json.loads(redis_client.hget(holds_key(), "mail\x00waiting"))
        assert stored["silencedBy"] == "operator"  # kept in Redis: a restart keeps it

        assert (await client.post(f"{MAIL}/unsilence/", headers=AUTH)).status_code == 200
        assert await passes(watch, 1) == 1
        await found_within(lambda: len(receiver.bodies) == 1)
        acked = await client.post(f"{MAIL}/acknowledge/", headers=AUTH)
        assert acked.status_code == 200 and acked.json()["acknowledgedBy"] == "operator"
        assert await passes(watch, 5) == 0  # RENOTIFY would have told it again by now
        shown = (await client.get("/queues/api/alerts/", headers=AUTH)).json()
        assert shown["held"][0]["acknowledgedBy"] == "operator"
        assert abs(shown["held"][0]["acknowledgedAt"] - time.time()) < 60

        await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2")
        assert await passes(watch, 1) == 1
        await found_within(lambda: len(receiver.bodies) == 2)
        assert [b["status"] for b in receiver.bodies] == ["firing", "resolved"]
        # Resolved: the acknowledgement ended with it.
        assert (await client.get("/queues/api/alerts/", headers=AUTH)).json()["held"] == []
    # Both notices' rows written (no read while one is).
    for _ in range(300):
        if await audited() == 2:
            break
        await asyncio.sleep(0.05)
    actions = [
        (e.action, e.username, e.queue)
        async for e in AuditEntry.objects.exclude(action="alert").order_by("id")
    ]
    assert actions == [
        ("silence-alert", "operator", "mail"),
        ("unsilence-alert", "operator", "mail"),
        ("acknowledge-alert", "operator", "mail"),
    ]


async def test_silencing_is_refused_without_operate_under_read_only_and_for_bad_input(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "m", "--data", "{}")
    for minutes in ("0", "10081", "soon", ""):
        answer = await client.post(f"{MAIL}/silence/", {"minutes": minutes}, headers=AUTH)
        assert answer.status_code == 400, minutes
    unknown = "/queues/api/queues/mail/alerts/wating/silence/"
    assert (await client.post(unknown, {"minutes": "5"}, headers=AUTH)).status_code == 400
    assert (await client.get(f"{MAIL}/silence/", headers=AUTH)).status_code == 405
    assert (await client.post(f"{MAIL}/silence/", {"minutes": "5"})).status_code == 401
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(
        BASIC_AUTH_PLAIN={"operator": "s3cret-pass", "vera": "look-only"},
        QUEUE_ACCESS=[{"QUEUES": "*", "VIEW": ["user:vera"], "OPERATE": ["user:operator"]}],
    )
    with override_settings(BULLPEN=config):
        refused = await client.post(f"{MAIL}/silence/", {"minutes": "5"}, headers=VIEWER)
        assert refused.status_code == 403
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        refused = await client.post(f"{MAIL}/acknowledge/", headers=AUTH)
        assert refused.status_code == 403
    assert redis_client.exists(holds_key()) == 0
    assert await AuditEntry.objects.filter(action="silence-alert", status=200).acount() == 0
