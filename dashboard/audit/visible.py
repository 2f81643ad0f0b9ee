"""The audit rows an operator may read: those of queues they may view (QUEUE_ACCESS); rows of
no one queue (sign-ins, pause-all) may name any queue, so only the admin's audit log shows them
then. Shared by the audit page and ``api/audit/``."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest

from dashboard.auth.queue_access import for_request
from dashboard.models import AuditEntry


async def visible_entries(request: HttpRequest) -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.all()
    access = await for_request(request)
    if not access.restricted:
        return entries
    names = [name async for name in entries.order_by().values_list("queue", flat=True).distinct()]
    return entries.filter(queue__in=[name for name in names if name and access.may_view(name)])
