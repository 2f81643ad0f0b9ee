"""Writing the audit log."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from dashboard.models import AuditEntry
from dashboard.principal import Principal

_MAX_IDS = 1000


async def record(
    request: HttpRequest,
    principal: Principal,
    action: str,
    *,
    queue: str = "",
    job_ids: list[str] | None = None,
    count: int = 0,
    status: int,
    error: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    ids = list(job_ids or [])
    extra = dict(detail or {})
    if len(ids) > _MAX_IDS:
        extra["jobIdsOmitted"] = len(ids) - _MAX_IDS
        ids = ids[:_MAX_IDS]
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded:
        extra["forwardedFor"] = forwarded[:200]
    if status < 300:
        result = AuditEntry.Result.OK
    elif status in (401, 403, 405, 409):
        result = AuditEntry.Result.REFUSED
    else:
        result = AuditEntry.Result.FAILED
    await AuditEntry.objects.acreate(
        username=principal.username[:150],
        via=principal.via,
        remote_addr=str(request.META.get("REMOTE_ADDR", ""))[:64],
        action=action,
        queue=queue[:300],
        job_ids=ids,
        count=count,
        result=result,
        status=status,
        error=error[:2000],
        detail=extra,
    )
