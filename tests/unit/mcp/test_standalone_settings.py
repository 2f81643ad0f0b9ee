"""The standalone site's environment: BULLPEN_MCP_ACTIONS turns the MCP server's action tools
on, and Django tasks run on BullMQ by default, in the queues BULLPEN_TASK_QUEUES names."""

from __future__ import annotations

from pathlib import Path

from tests.support.standalone import standalone_env, standalone_value

NOWHERE = "redis://127.0.0.1:1/0"


def test_mcp_actions_only_when_asked_for(tmp_path: Path) -> None:
    off = standalone_env(NOWHERE, tmp_path)
    assert standalone_value(off, 's.BULLPEN["MCP"]') == {"ACTIONS": False}
    on = standalone_env(NOWHERE, tmp_path, BULLPEN_MCP_ACTIONS="1")
    assert standalone_value(on, 's.BULLPEN["MCP"]') == {"ACTIONS": True}


def test_tasks_run_on_bullmq_by_default(tmp_path: Path) -> None:
    plain = standalone_env(NOWHERE, tmp_path)
    assert standalone_value(plain, "s.TASKS") == {
        "default": {"BACKEND": "queues.tasks.BullMQBackend", "QUEUES": ["default"]}
    }
    named = standalone_env(NOWHERE, tmp_path, BULLPEN_TASK_QUEUES="default mail")
    assert standalone_value(named, 's.TASKS["default"]["QUEUES"]') == ["default", "mail"]
