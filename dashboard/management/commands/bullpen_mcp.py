"""``manage.py bullpen_mcp``: Bullpen's MCP server on stdio (dashboard/mcp/), for an assistant
that starts it as a subprocess. Standard output carries the protocol only."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from dashboard.mcp.server import build_server


class Command(BaseCommand):
    help = (
        "Serve Bullpen's MCP tools on stdio: list_queues, get_job, search, failure_groups, "
        'history; retry and pause tools too when BULLPEN["MCP"]["ACTIONS"] is set.'
    )

    def handle(self, *args: Any, **options: Any) -> None:
        build_server().run("stdio")
