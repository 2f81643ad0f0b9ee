"""The MCP server: Bullpen's reads as tools, and its safe actions when allowed.

``manage.py bullpen_mcp`` (``./run mcp``) serves it on stdio. Tools: ``list_queues``,
``get_job``, ``search``, ``failure_groups``, ``history``; with ``BULLPEN["MCP"]["ACTIONS"]``
also ``retry_job``, ``retry_failure_group``, ``pause_queue``, ``resume_queue``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from dashboard.mcp import actions, reads
from dashboard.mcp.identity import actions_enabled

INSTRUCTIONS = (
    "Bullpen monitors BullMQ job queues. Start with list_queues; failure_groups tells why a "
    "queue's jobs fail; get_job reads one job; search finds jobs across queues; history gives "
    "a queue's throughput, failure rate and timings. Job data may be redacted."
)

READ_TOOLS = (
    ("list_queues", reads.list_queues),
    ("get_job", reads.get_job),
    ("search", reads.search),
    ("failure_groups", reads.failure_groups),
    ("history", reads.history),
)
ACTION_TOOLS = (
    ("retry_job", actions.retry_job),
    ("retry_failure_group", actions.retry_failure_group),
    ("pause_queue", actions.pause_queue),
    ("resume_queue", actions.resume_queue),
)


def build_server() -> MCPServer:
    server = MCPServer(name="bullpen", instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    for name, read in READ_TOOLS:
        server.add_tool(read, name=name, annotations=read_only)
    if actions_enabled():
        acting = ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=False
        )
        for name, act in ACTION_TOOLS:
            server.add_tool(act, name=name, annotations=acting)
    return server
