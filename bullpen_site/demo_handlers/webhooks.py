"""Webhook delivery with per-tenant fairness.

Each tenant may receive at most 2 deliveries a second (``TenantLimit``; see
queues/runner/fairness.py): a tenant whose burst of events floods the queue gets them delivered
at its rate, spread out in ``delayed``, while other tenants' webhooks go out as they arrive.
5xx and 429 answers are retried with backoff; 410 Gone is final (the dead-letter queue).

The transport is pluggable (:func:`use_transport`): a deterministic simulation by default, or
:class:`HttpTransport` to really POST (signed with HMAC-SHA256 when given tenant secrets).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import urllib.error
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from bullmq import UnrecoverableError

from queues.runner import JobContext, TenantLimit, job_handler

PER_TENANT = TenantLimit(max=2, duration_ms=1000, field="tenant")


class DeliveryFailed(Exception):
    """The endpoint answered with a retryable status (or not at all)."""


class EndpointGone(UnrecoverableError):  # type: ignore[misc]
    """410 Gone (or another final 4xx): the subscriber removed its endpoint."""


class Transport(Protocol):
    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int: ...


@dataclass
class SimulatedTransport:
    """Hosts named ``down...`` answer 503, ``gone...`` 410, ``flaky...`` 503 on odd bodies;
    the rest 200 after a short, deterministic latency."""

    latency_s: float = 0.05

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        host = urlsplit(url).hostname or ""
        await asyncio.sleep(self.latency_s * (1 + zlib.crc32(body) % 4))
        if host.startswith("down"):
            return 503
        if host.startswith("gone"):
            return 410
        if host.startswith("flaky") and zlib.crc32(body) % 2:
            return 503
        return 200


@dataclass
class HttpTransport:
    timeout_s: float = 10.0
    secrets: Mapping[str, str] = field(default_factory=dict)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        if urlsplit(url).scheme not in ("http", "https"):
            raise EndpointGone(f"not an http(s) URL: {url}")
        request = urllib.request.Request(url, body, dict(headers), method="POST")  # noqa: S310

        def send() -> int:
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:  # noqa: S310
                    return int(answer.status)
            except urllib.error.HTTPError as error:
                return int(error.code)
            except (urllib.error.URLError, TimeoutError) as error:
                raise DeliveryFailed(f"{url}: {error}") from error

        return await asyncio.to_thread(send)

    def sign(self, tenant: str, body: bytes) -> dict[str, str]:
        secret = self.secrets.get(tenant)
        if not secret:
            return {}
        digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return {"X-Bullpen-Signature": f"sha256={digest}"}


_transport: Transport = SimulatedTransport()


def use_transport(transport: Transport) -> None:
    global _transport
    _transport = transport


@job_handler("webhooks", concurrency=5, per_tenant=PER_TENANT)
async def deliver_webhook(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    tenant = str(payload["tenant"])
    url = str(payload["url"])
    body = json.dumps(
        {"event": payload.get("event"), "data": payload.get("data"), "delivery": ctx.job_id},
        separators=(",", ":"),
    ).encode()
    headers = {"Content-Type": "application/json", "X-Bullpen-Delivery": ctx.job_id}
    if isinstance(_transport, HttpTransport):
        headers.update(_transport.sign(tenant, body))
    status = await _transport.post(url, body, headers)
    await ctx.log(f"attempt {ctx.attempt}: POST {url} -> {status}")
    if 200 <= status < 300:
        return {"tenant": tenant, "status": status}
    if status == 429 or status >= 500:
        raise DeliveryFailed(f"{url} answered {status}")
    raise EndpointGone(f"{url} answered {status}: not retrying")
