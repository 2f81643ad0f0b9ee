from __future__ import annotations

from django.contrib import admin

from dashboard.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "created_at",
        "username",
        "via",
        "remote_addr",
        "action",
        "queue",
        "connection",
        "count",
        "result",
        "status",
    )
    list_filter = ("result", "action", "via", "connection")
    search_fields = ("username", "queue", "error")
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
