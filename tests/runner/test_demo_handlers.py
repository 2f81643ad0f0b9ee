"""The demo handlers: each a plain function, tested as one, then all four run by the runner on
the demo's own job mix (with short retries) against a real redis-server."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from bullmq import UnrecoverableError
from django.test import AsyncClient, override_settings
from PIL import Image

from bullpen_site.demo_handlers import documents, images, newsletter, webhooks
from bullpen_site.demo_jobs import BUNDLE_SIZE, DEMO_QUEUES, demo_flow, demo_job, seed
from queues.runner import Producer, Registry, default_registry
from queues.runner.context import SyncJobContext
from tests.support.demo_recorder import AsyncRecorder
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, wait_for


class Recorder(SyncJobContext):
    """Stands in for a sync handler's job context: records progress and log lines."""

    def __init__(self, attempt: int = 1) -> None:  # no job, no event loop: nothing to call
        self.queue, self.job_id, self.name = "q", "7", "job"
        self.attempt, self.max_attempts = attempt, 5
        self.progressed: list[Any] = []
        self.lines: list[str] = []

    def progress(self, value: Any) -> None:
        self.progressed.append(value)

    def log(self, line: str) -> None:
        self.lines.append(line)


# ---------------------------------------------------------------------------- documents


async def test_document_analysis_is_deterministic() -> None:
    payload = {"document": "contract-1.pdf", "pages": 3}
    first = await documents.analyze_document(payload, AsyncRecorder(attempt=2))
    again = await documents.analyze_document(payload, AsyncRecorder(attempt=3))
    assert first == again
    assert first["document"] == "contract-1.pdf"
    assert first["pages"] == 3
    assert first["language"] in {"en", "fr", "de", "es"}


async def test_unreadable_documents_are_not_retried_and_busy_ones_are() -> None:
    with pytest.raises(documents.UnreadableDocument):
        await documents.analyze_document({"document": "x.corrupt"}, AsyncRecorder())
    busy = [
        n
        for n in range(200)
        if await _refused(documents.SimulatedAnalyzer(seconds_per_page=0), f"doc-{n}.pdf")
    ]
    assert 10 < len(busy) < 60  # about 15% of first attempts
    analyzer = documents.SimulatedAnalyzer(seconds_per_page=0)
    assert await analyzer.analyze(f"doc-{busy[0]}.pdf", 1, attempt=2)  # the retry goes through


async def _refused(analyzer: documents.SimulatedAnalyzer, document: str) -> bool:
    try:
        await analyzer.analyze(document, 1, attempt=1)
    except documents.UpstreamBusy:
        return True
    return False


def test_the_documents_queue_is_rate_limited() -> None:
    spec = default_registry.get("documents")
    assert spec.options.limiter == documents.UPSTREAM_LIMIT
    assert spec.options.concurrency == 4


# --------------------------------------------------------------------------- newsletter


def test_newsletter_goes_through_djangos_email_backend(mailoutbox: list[Any]) -> None:
    ctx = Recorder()
    result = newsletter.send_newsletter(
        {"to": "ada@example.com", "template": "welcome", "name": "Ada"}, ctx
    )
    assert result == {"to": "ada@example.com", "template": "welcome", "sent": 1}
    assert len(mailoutbox) == 1
    message = mailoutbox[0]
    assert message.subject == "Welcome to ACME"
    assert message.to == ["ada@example.com"]
    assert "Hello Ada" in message.body
    assert ctx.lines == ["sent 'welcome' to ada@example.com"]
    assert newsletter.email_backend() is None  # the test run's locmem, not the console


def test_a_missing_mailbox_is_final(mailoutbox: list[Any]) -> None:
    with pytest.raises(newsletter.MailboxMissing, match="550"):
        newsletter.send_newsletter({"to": "x@bounce.invalid"}, Recorder())
    assert mailoutbox == []


def test_newsletter_ids_are_one_per_user_template_and_day() -> None:
    assert newsletter.newsletter_job_id(42, "weekly", date(2026, 11, 30)) == (
        "email.42.weekly.2026-11-30"
    )
    spec = default_registry.get("newsletter")
    assert [s.id for s in spec.schedules] == ["weekly-digest"]
    assert spec.schedules[0].tz == "Europe/Paris"


# ------------------------------------------------------------------------------- images


def test_images_are_resized_to_every_width_and_format() -> None:
    ctx = Recorder()
    result = images.resize_image(
        {"image": "photo-1.jpg", "widths": [64, 128], "formats": ["webp", "jpeg", "png"]}, ctx
    )
    assert result["source"] == [1600, 1200]
    assert [(v["width"], v["height"], v["format"]) for v in result["variants"]] == [
        (64, 48, "webp"),
        (64, 48, "jpeg"),
        (64, 48, "png"),
        (128, 96, "webp"),
        (128, 96, "jpeg"),
        (128, 96, "png"),
    ]
    assert all(v["bytes"] > 0 for v in result["variants"])
    assert ctx.progressed == [17, 33, 50, 67, 83, 100]
    assert ctx.lines == ["64px: webp, jpeg, png", "128px: webp, jpeg, png"]


@pytest.fixture
def media_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(MEDIA_ROOT=str(tmp_path)):
        yield tmp_path


def test_images_from_storage_are_resized_and_saved(media_root: Path) -> None:
    Image.new("RGB", (400, 100), "purple").save(media_root / "banner.png")
    result = images.resize_image(
        {"image": "banner.png", "widths": [200], "formats": ["jpeg"], "save": True}, Recorder()
    )
    assert result["source"] == [400, 100]
    saved = media_root / result["variants"][0]["path"]
    with Image.open(saved) as resized:
        assert (resized.size, resized.format) == ((200, 50), "JPEG")


def test_unreadable_images_are_final(media_root: Path) -> None:
    (media_root / "broken.jpg").write_bytes(b"GIF89a? no")
    with pytest.raises(images.UnreadableImage):
        images.resize_image({"image": "broken.jpg"}, Recorder())
    with pytest.raises(images.UnreadableImage):
        images.resize_image({"image": "photo-13.corrupt"}, Recorder())
    with pytest.raises(UnrecoverableError, match="bad request"):
        images.resize_image({"image": "a.jpg", "formats": ["bmp"]}, Recorder())


# ----------------------------------------------------------------------------- webhooks


async def test_webhook_statuses_decide_retry_or_dead_letter() -> None:
    ok = await webhooks.deliver_webhook(
        {"tenant": "t1", "url": "https://hooks.t1.example/in", "event": "e"}, AsyncRecorder()
    )
    assert ok == {"tenant": "t1", "status": 200}
    with pytest.raises(webhooks.DeliveryFailed, match="503"):
        await webhooks.deliver_webhook(
            {"tenant": "t3", "url": "https://down.t3.example/in"}, AsyncRecorder()
        )
    with pytest.raises(webhooks.EndpointGone, match="410"):
        await webhooks.deliver_webhook(
            {"tenant": "t2", "url": "https://gone.t2.example/in"}, AsyncRecorder()
        )
    spec = default_registry.get("webhooks")
    assert spec.options.per_tenant == webhooks.PER_TENANT


class _Hook(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []
    status = 204

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((dict(self.headers), body))
        self.send_response(type(self).status)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def hook_server() -> Iterator[str]:
    _Hook.received = []
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


async def test_http_transport_posts_signed_json(hook_server: str) -> None:
    transport = webhooks.HttpTransport(timeout_s=5, secrets={"acme": "s3cret"})
    webhooks.use_transport(transport)
    try:
        ctx = AsyncRecorder()
        result = await webhooks.deliver_webhook(
            {"tenant": "acme", "url": hook_server, "event": "order.paid", "data": {"n": 1}}, ctx
        )
        _Hook.status = 410
        with pytest.raises(webhooks.EndpointGone):
            await webhooks.deliver_webhook({"tenant": "acme", "url": hook_server}, ctx)
    finally:
        webhooks.use_transport(webhooks.SimulatedTransport())
        _Hook.status = 204
    assert result == {"tenant": "acme", "status": 204}
    headers, body = _Hook.received[0]
    assert json.loads(body) == {"event": "order.paid", "data": {"n": 1}, "delivery": "7"}
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert headers["X-Bullpen-Signature"] == f"sha256={expected}"
    assert headers["Content-Type"] == "application/json"


# ------------------------------------------------------------------ the demo, end to end


def _fast_demo_registry() -> Registry:
    """The demo handlers and options, with retries in milliseconds instead of seconds."""
    registry = Registry()
    for queue in DEMO_QUEUES:
        spec = default_registry.get(queue)
        options = spec.options.with_changes(attempts=2, backoff_ms=10)
        registry.register(queue, spec.func, options, schedules=spec.schedules)
    return registry


async def test_the_demo_mix_fills_every_queue_and_the_dead_letter_queue(
    runners: Runners, redis_client: Any, mailoutbox: list[Any]
) -> None:
    registry = _fast_demo_registry()
    async with Producer(registry) as producer:
        await seed(producer, per_queue=13)  # job 13 of each queue is poison
    await runners.start(registry)

    async def settled() -> bool:
        dead = redis_client.lrange("bull:dead-letter:wait", 0, -1)
        queues_of_dead = {letter.split(".")[0] for letter in dead}
        done = all(redis_client.zcard(f"bull:{q}:completed") >= 8 for q in DEMO_QUEUES)
        return done and queues_of_dead >= set(DEMO_QUEUES)

    await wait_for("the demo mix to settle", settled, limit_s=60)
    await runners.stop_all()
    for queue in DEMO_QUEUES:
        assert redis_client.zcard(f"bull:{queue}:failed") >= 1
    # Job 11 of each queue is delayed by minutes, the webhooks flood has deferred jobs.
    for queue in ("documents", "newsletter", "images"):
        assert redis_client.zcard(f"bull:{queue}:delayed") >= 1
    assert demo_job("webhooks", 3).data["tenant"] == "tenant-0"
    assert len(mailoutbox) >= 8
    # The weekly digest scheduler is registered.
    assert redis_client.zrange("bull:newsletter:repeat", 0, -1) == ["weekly-digest"]
    # Dead letters keep what the on-call engineer needs.
    letter = json.loads(redis_client.hget("bull:dead-letter:documents.13", "data") or "{}")
    if not letter:  # job numbers are the queue's own ids
        ids = [
            i
            for i in redis_client.lrange("bull:dead-letter:wait", 0, -1)
            if i.startswith("documents.")
        ]
        letter = json.loads(redis_client.hget(f"bull:dead-letter:{ids[0]}", "data"))
    assert letter["queue"] == "documents"
    assert letter["data"]["document"].endswith(".corrupt")
    assert "not a PDF" in letter["failedReason"]


@pytest.mark.django_db(transaction=True)
async def test_the_demo_mix_has_a_flow_that_its_job_page_shows(
    runners: Runners, redis_client: Any, peer: Peer, client: AsyncClient
) -> None:
    registry = _fast_demo_registry()
    async with Producer(registry) as producer:
        await seed(producer, per_queue=2)
    # The bundle's parent waits for its children, as BullMQ's flows do.
    (parent,) = redis_client.zrange("bull:documents:waiting-children", 0, -1)
    assert redis_client.hget(f"bull:documents:{parent}", "name") == "summarize"
    assert redis_client.hget(f"bull:documents:{parent}", "data") == json.dumps(
        demo_flow(2)["data"], separators=(",", ":")
    )
    await runners.start(registry)

    async def summed_up() -> bool:
        return redis_client.zscore("bull:documents:completed", parent) is not None

    await wait_for("the bundle's parent to complete", summed_up, limit_s=60)
    await runners.stop_all()
    # Node reads the parent's result: every child's analysis, summed up.
    seen = peer("inspect", "--queue", "documents", "--ids", parent)["details"][parent]
    assert seen["state"] == "completed"
    summary = (
        json.loads(seen["returnvalue"])
        if isinstance(seen["returnvalue"], str)
        else seen["returnvalue"]
    )
    assert len(summary["documents"]) == BUNDLE_SIZE and summary["words"] > 0
    # The job page has a tree to show: the flow API finds the parent and its children.
    flow = (await client.get(f"/queues/api/queues/documents/jobs/{parent}/flow/")).json()
    assert flow["root"]["name"] == "summarize"
    children = flow["root"]["children"]
    assert len(children) == BUNDLE_SIZE and {c["state"] for c in children} == {"completed"}
    page = (await client.get(f"/queues/q/documents/jobs/{parent}/")).content.decode()
    assert 'data-testid="flow"' in page
