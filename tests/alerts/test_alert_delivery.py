"""Alerts that reach people: a webhook on a local HTTP receiver (retried after a 500, told once
within the cooldown, then resolved) and e-mail through Django's locmem backend, both sent by the
process holding the live lease and audited; the new-failure-signature rule on real failures of
Node BullMQ (the standalone site's environment: test_alert_environment.py)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import mail
from django.test import AsyncClient, override_settings
from prometheus_client.parser import text_string_to_metric_families

from dashboard.alerts import delivery as alert_delivery
from dashboard.alerts.delivery import deliver
from dashboard.live import channel_groups
from dashboard.models import AuditEntry
from queues.alerts import undelivered as alert_undelivered
from queues.alerts.state import FIRING, Notice
from queues.alerts.thresholds import Alert
from queues.alerts.watch import (
    AlertWatch,
    DeliverySettings,
    state_key,
    undelivered_key,
    webhook_target,
)
from tests.support.live_reads import found_within
from tests.support.peer import Peer
from tests.support.webhook_receiver import AwayReceiver, Receiver

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver().start()
    yield found
    found.stop()


@pytest.fixture
def away_receiver() -> Iterator[AwayReceiver]:
    away = AwayReceiver()
    yield away
    for each in away.started:
        each.stop()


async def alert_rows() -> list[tuple[str, str, str, int]]:
    return [
        (e.queue, e.detail["phase"], e.detail["rule"], e.status)
        async for e in AuditEntry.objects.filter(action="alert").order_by("id")
    ]


async def test_a_threshold_crossed_is_told_once_retried_and_resolved(
    client: AsyncClient,
    peer: Peer,
    receiver: Receiver,
    redis_client: Any,
    bullpen_settings: dict[str, Any],
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    receiver.answers["/hook/s3cret-part"] = [500]  # the first try fails: tried again
    config = {
        **bullpen_settings,
        "ALERTS": {
            "waiting": 1,
            "WEBHOOKS": [f"{receiver.url}/hook/s3cret-part"],
            "EMAIL_TO": ["oncall@example.com"],
            "COOLDOWN": 60,
            "INTERVAL": 0.1,
            "LINK_BASE": "https://ops.example.com",
        },
    }
    with override_settings(BULLPEN=config):
        settings = DeliverySettings.from_config()
        # A process without the live lease reads and sends nothing.
        assert await AlertWatch(deliver, lambda: False).evaluate(settings) == []
        try:
            # Any request starts the sender, no dashboard page needed.
            assert (await client.get("/queues/api/alerts/")).status_code == 200
            await found_within(lambda: len(receiver.bodies) == 2)
            assert [status for _, status in receiver.statuses] == [500, 200]
            assert receiver.bodies[0] == receiver.bodies[1]
            firing = receiver.bodies[1]
            assert re.fullmatch("[0-9a-f]{32}", firing["id"])  # the same on the second try
            assert {k: v for k, v in firing.items() if k not in ("text", "id")} == {
                "status": "firing",
                "queue": "mail",
                "connection": "default",
                "rule": "waiting",
                "value": 2,
                "threshold": 1,
                "link": "https://ops.example.com/queues/q/mail/",
            }
            assert firing["text"].startswith("Alert on mail: 2 jobs waiting, more than 1")
            await found_within(lambda: len(mail.outbox) == 1)
            (message,) = mail.outbox
            assert message.to == ["oncall@example.com"]
            assert message.subject == "[Bullpen] Alert on mail: 2 jobs waiting, more than 1"
            assert "https://ops.example.com/queues/q/mail/" in message.body
            # Still firing, a dozen evaluations later: nothing more is sent.
            await asyncio.sleep(1.2)
            assert len(receiver.bodies) == 2 and len(mail.outbox) == 1

            await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2")
            await found_within(lambda: len(receiver.bodies) == 3)
            resolved = receiver.bodies[2]
            assert (resolved["status"], resolved["rule"], resolved["value"]) == (
                "resolved",
                "waiting",
                2,
            )
            assert resolved["id"] != firing["id"]
            await found_within(lambda: len(mail.outbox) == 2)
            assert mail.outbox[1].subject.startswith("[Bullpen] Resolved on mail: waiting")

            # Firing again within the cooldown: not told (it would be, still firing after it).
            await asyncio.to_thread(
                peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2"
            )
            await asyncio.sleep(1.2)
            assert len(receiver.bodies) == 3 and len(mail.outbox) == 2
            stored = json.loads(redis_client.get(state_key()))
            assert stored["mail\x00waiting"]["firing"] is True
            assert stored["mail\x00waiting"]["told"] is False
            for _ in range(200):  # the resolved notice's row follows its sends
                if len(await alert_rows()) == 2:
                    break
                await asyncio.sleep(0.05)
        finally:
            await channel_groups.stop()
    rows = await alert_rows()
    assert rows == [("mail", "firing", "waiting", 200), ("mail", "resolved", "waiting", 200)]
    entry = await AuditEntry.objects.filter(action="alert").afirst()
    assert entry is not None and entry.username == "bullpen-alerts"
    # Both targets, the webhook named by its host alone (its path holds the secret).
    assert entry.detail["delivered"] == ["e-mail", f"webhook 1 {receiver.url}"]
    assert "s3cret" not in json.dumps(entry.detail)


async def test_a_webhook_that_keeps_failing_is_kept_to_try_again_and_audited(
    receiver: Receiver, bullpen_settings: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alert_delivery, "FIRST_PAUSE_S", 0.01)  # the same tries, sooner
    receiver.answers = {"/a": [503] * alert_delivery.ATTEMPTS, "/b": [404]}
    webhooks = [f"{receiver.url}/a", f"{receiver.url}/b"]
    notice = Notice(FIRING, "mail", Alert("waiting", 2, 1))
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": {"WEBHOOKS": webhooks}}):
        owed = await deliver(notice)
    # The first webhook got every try and is owed the notice; the second one's 404 is final.
    assert owed == {webhook_target(webhooks[0])}
    assert sorted(receiver.statuses) == [("/a", 503)] * alert_delivery.ATTEMPTS + [("/b", 404)]
    entry = await AuditEntry.objects.aget(action="alert")
    assert (entry.result, entry.status) == (AuditEntry.Result.FAILED, 502)
    assert entry.detail["delivered"] == [] and len(entry.detail["failed"]) == 2
    assert entry.detail["tryAgain"] == [f"webhook 1 {receiver.url}"]
    assert entry.detail["id"] == notice.id
    assert "HTTP 404" in entry.error and "503" in entry.error


def undelivered(redis_client: Any) -> list[dict[str, Any]]:
    stored = redis_client.get(undelivered_key())
    return json.loads(stored) if stored else []


@pytest.fixture
def soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pause of delivery shortened: the same rounds, in a test's time."""
    monkeypatch.setattr(alert_delivery, "FIRST_PAUSE_S", 0.01)
    monkeypatch.setattr(alert_undelivered, "RETRY_FIRST_S", 0.2)
    monkeypatch.setattr(alert_undelivered, "RETRY_MOST_S", 0.5)


def sending_to(url: str, bullpen_settings: dict[str, Any]) -> dict[str, Any]:
    alerts = {"waiting": 1, "WEBHOOKS": [url], "COOLDOWN": 0, "INTERVAL": 0.1}
    return {**bullpen_settings, "ALERTS": alerts}


@pytest.mark.usefixtures("soon")
async def test_an_alert_fired_while_its_webhook_is_down_reaches_it_once_it_is_up(
    client: AsyncClient,
    peer: Peer,
    away_receiver: AwayReceiver,
    redis_client: Any,
    bullpen_settings: dict[str, Any],
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    with override_settings(BULLPEN=sending_to(f"{away_receiver.url}/hook", bullpen_settings)):
        try:
            assert (await client.get("/queues/api/alerts/")).status_code == 200
            # Its first tries fail (nobody listens): kept in Redis, and tried again.
            await found_within(lambda: len(undelivered(redis_client)) == 1)
            await found_within(lambda: undelivered(redis_client)[0]["rounds"] >= 3)
            (kept,) = undelivered(redis_client)
            assert kept["notice"]["status"] == "firing"
            assert kept["owed"] == [webhook_target(f"{away_receiver.url}/hook")]
            receiver = away_receiver.start()
            await found_within(lambda: len(receiver.bodies) == 1)
            await found_within(lambda: undelivered(redis_client) == [])
            (told,) = receiver.bodies
            assert (told["status"], told["queue"], told["rule"]) == ("firing", "mail", "waiting")
            assert told["id"] == kept["notice"]["id"]  # the notice it was, not a new one
            first, last = await alert_entries(2)
        finally:
            await channel_groups.stop()
    assert (first.status, first.detail["delivered"], first.detail["tryAgain"]) == (
        502,
        [],
        [f"webhook 1 {away_receiver.url}"],
    )
    assert (last.status, last.detail["delivered"]) == (200, [f"webhook 1 {away_receiver.url}"])
    assert first.detail["id"] == last.detail["id"] == told["id"]
    assert len(receiver.bodies) == 1


@pytest.mark.usefixtures("soon")
async def test_an_alert_over_before_its_webhook_is_back_is_never_told_at_all(
    client: AsyncClient,
    peer: Peer,
    away_receiver: AwayReceiver,
    redis_client: Any,
    bullpen_settings: dict[str, Any],
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    with override_settings(BULLPEN=sending_to(f"{away_receiver.url}/hook", bullpen_settings)):
        try:
            assert (await client.get("/queues/api/alerts/")).status_code == 200
            await found_within(lambda: len(undelivered(redis_client)) == 1)
            await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2")
            # Its end drops its start, kept for the webhook that never had it.
            await found_within(lambda: undelivered(redis_client) == [])
            receiver = away_receiver.start()
            # Another alert, told at once: the webhook is up and hears of it alone.
            await asyncio.to_thread(
                peer, "add-bulk", "--queue", "shop", "--name", "s", "--count", "2"
            )
            await found_within(lambda: len(receiver.bodies) == 1)
        finally:
            await channel_groups.stop()
    assert [(b["status"], b["queue"]) for b in receiver.bodies] == [("firing", "shop")]
    # The audit log says mail's start failed, and nothing of its end (it went nowhere).
    rows = [(e.queue, e.detail["phase"], e.status) for e in await alert_entries(2)]
    assert rows == [("mail", "firing", 502), ("shop", "firing", 200)]


async def alert_entries(count: int) -> list[AuditEntry]:
    """The audit log's alert rows, once there are ``count`` (they follow the sends)."""
    deadline = time.monotonic() + 15
    while True:
        found = [e async for e in AuditEntry.objects.filter(action="alert").order_by("id")]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_webhooks_that_hang_do_not_slow_the_job_api(
    client: AsyncClient,
    peer: Peer,
    receiver: Receiver,
    bullpen_settings: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    added = await asyncio.to_thread(
        peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "1"
    )
    job_id = added["first"]
    monkeypatch.setattr(alert_delivery, "WEBHOOK_TIMEOUT_S", 120.0)  # hung for the whole test
    receiver.hanging.add("/slow")
    webhooks = [f"{receiver.url}/slow"]
    # More notices than any default thread pool has threads (at most 32).
    notices = [Notice(FIRING, f"q{n}", Alert("waiting", 2, 1)) for n in range(40)]
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": {"WEBHOOKS": webhooks}}):
        sends = [asyncio.ensure_future(deliver(notice)) for notice in notices]
        try:
            await found_within(lambda: receiver.hung >= alert_delivery.SENDING_THREADS)
            async with asyncio.timeout(20):  # a stalled answer waits for the hung webhooks
                answer = await client.get(f"/queues/api/queues/mail/jobs/{job_id}/")
            assert answer.status_code == 200
            assert answer.json()["id"] == job_id
            # The sends wait for their own few threads: never more at once.
            assert receiver.most_hung == alert_delivery.SENDING_THREADS
        finally:
            for send in sends:
                send.cancel()
            receiver.release.set()
            await asyncio.gather(*sends, return_exceptions=True)


# An earlier test's sockets, collected while this one runs, must not fail it.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_webhook_redirect_is_a_failure_never_followed(
    receiver: Receiver, bullpen_settings: dict[str, Any]
) -> None:
    receiver.answers = {"/to-inside": [307], "/to-ftp": [302]}
    # Where the redirects point: an address of the inside network, and another scheme.
    receiver.locations = {
        "/to-inside": f"{receiver.url}/internal-admin",
        "/to-ftp": "ftp://127.0.0.1/etc/passwd",
    }
    webhooks = [f"{receiver.url}/to-inside", f"{receiver.url}/to-ftp"]
    notice = Notice(FIRING, "mail", Alert("waiting", 2, 1))
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": {"WEBHOOKS": webhooks}}):
        await deliver(notice)
    # Each asked once: a redirect is final, and its target never asked.
    assert sorted(receiver.statuses) == [("/to-ftp", 302), ("/to-inside", 307)]
    entry = await AuditEntry.objects.aget(action="alert")
    assert (entry.result, entry.status) == (AuditEntry.Result.FAILED, 502)
    assert entry.detail["delivered"] == []
    assert "HTTP 307: redirects are not followed" in entry.error
    assert "HTTP 302: redirects are not followed" in entry.error


async def test_a_new_failure_signature_shows_everywhere_alerts_do(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    timeout = json.dumps({"error": "Timeout after 3000 ms"})
    await asyncio.to_thread(
        peer, "add-bulk", "--queue", "billing", "--name", "c", "--count", "2", "--data", timeout
    )
    await asyncio.to_thread(peer, "work", "--queue", "billing", "--fail", "--count", "2")
    # Those two failed two hours ago (BullMQ stamps a failure with the time it happens).
    two_hours_ago = int(time.time() * 1000) - 7_200_000
    for job_id in redis_client.zrange("bull:billing:failed", 0, -1):
        redis_client.zadd("bull:billing:failed", {job_id: two_hours_ago}, xx=True)
        redis_client.hset(f"bull:billing:{job_id}", "finishedOn", two_hours_ago)
    alerts = (await client.get("/queues/api/alerts/")).json()["alerts"]
    assert alerts["billing"] == []
    # The same failure again (another number, one signature) and a new one.
    for error in ("Timeout after 5000 ms", "card declined for user 42"):
        data = json.dumps({"error": error})
        await asyncio.to_thread(
            peer, "add", "--queue", "billing", "--name", "charge", "--data", data
        )
    await asyncio.to_thread(peer, "work", "--queue", "billing", "--fail", "--count", "2")

    alerts = (await client.get("/queues/api/alerts/")).json()["alerts"]
    (alert,) = alerts["billing"]
    assert (alert["rule"], alert["value"], alert["threshold"]) == ("new_failure_signatures", 1, 0)
    (signature,) = alert["signatures"]
    assert signature.startswith("card declined for user <n> @ ")
    overview = (await client.get("/queues/")).content.decode()
    assert 'data-rule="new_failure_signatures"' in overview
    with override_settings(BULLPEN={**bullpen_settings, "METRICS_TOKEN": "t0ken"}):
        scrape = await client.get("/queues/metrics", headers={"Authorization": "Bearer t0ken"})
    families = {f.name: f for f in text_string_to_metric_families(scrape.content.decode())}
    firing = {
        (s.labels["queue"], s.labels["rule"]): s.value for s in families["bullpen_alert"].samples
    }
    assert firing[("billing", "new_failure_signatures")] == 1
    assert firing[("billing", "failed_last_hour")] == 0
    # Off for this queue: not read, not shown.
    options = {"billing": {"alerts": {"new_failure_signatures": None}}}
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_OPTIONS": options}):
        assert (await client.get("/queues/api/alerts/")).json()["alerts"]["billing"] == []
