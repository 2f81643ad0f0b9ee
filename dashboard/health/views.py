"""``api/redis/`` and the overview's Redis panel (a fragment the overview loads after itself,
so that its own answer never waits on INFO).

Server-wide figures tell about every queue of a server. Without ``QUEUE_ACCESS`` whoever may
read the dashboard sees them; with it, only superusers do: a tenant whose rules show some
queues sees no panel and the API answers 403.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import translation

from dashboard.auth.guards import api_view, json_error, page_view
from dashboard.auth.queue_access import for_request
from dashboard.health.texts import warning_text
from queues.redis import connections
from queues.redis.health import ServerHealth, read_health


async def may_see_servers(request: HttpRequest) -> bool:
    access = await for_request(request)
    return access.holder is None or access.holder.superuser


def server_json(server: ServerHealth) -> dict[str, Any]:
    return {
        "name": server.name,
        "node": server.node,
        "up": server.up,
        "error": server.error,
        "version": server.version,
        "usedMemory": server.used_memory,
        "maxMemory": server.max_memory,
        "maxmemoryPolicy": server.maxmemory_policy,
        "fragmentation": server.fragmentation,
        "clients": server.clients,
        "opsPerSec": server.ops_per_sec,
        "latencyMs": server.latency_ms,
        "uptime": server.uptime_s,
        "role": server.role,
        "replicas": server.replicas,
        "warnings": [
            {"code": w.code, "text": warning_text(w), "params": dict(w.params)}
            for w in server.warnings
        ],
    }


@api_view
async def redis_api(request: HttpRequest) -> JsonResponse:
    if not await may_see_servers(request):
        return json_error("Server-wide Redis figures are not shown to you", 403)
    servers = await read_health()
    with translation.override("en"):  # the API speaks English, as everywhere else
        return JsonResponse({"connections": [server_json(server) for server in servers]})


@page_view
async def panel(request: HttpRequest) -> HttpResponse:
    context = await panel_context(request)
    if context is None:
        return HttpResponse("")  # the placeholder goes, and nothing takes its place
    return render(request, "bullpen/_redis_health.html", context)


async def panel_context(request: HttpRequest) -> dict[str, Any] | None:
    """What the Redis panel shows this viewer (None: nothing, not theirs to see, or no Redis
    configured: PostgreSQL stores alone)."""
    if not connections.redis_names() or not await may_see_servers(request):
        return None
    servers = await read_health()
    rows = [
        {
            "server": server,
            "percent": None if server.memory_share is None else round(100 * server.memory_share),
            "warnings": [warning_text(w) for w in server.warnings],
        }
        for server in servers
    ]
    attention = sum(1 for server in servers if server.warnings or not server.up)
    return {"rows": rows, "attention": attention}
