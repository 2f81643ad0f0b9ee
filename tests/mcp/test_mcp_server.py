"""The MCP server as an assistant meets it: ``manage.py bullpen_mcp`` started on stdio by the
SDK's own client, reading queues the worker runner filled, refusing actions unless they are
allowed, and auditing those it takes or refuses."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from queues.failures.failure_groups import failure_groups
from queues.reads.keys import QueueRef
from queues.runner import Producer, QueueOptions, Registry
from tests.support.paths import ROOT
from tests.support.servers.live_server import migrated_database
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import Runners, wait_for

READS = ["failure_groups", "get_job", "history", "list_queues", "search"]
ACTIONS = ["pause_queue", "resume_queue", "retry_failure_group", "retry_job"]


async def mailer(payload: dict[str, Any]) -> dict[str, Any]:
    if payload.get("fail"):
        raise TimeoutError(f"timeout talking to smtp {payload['host']}")
    return {"sent": payload["to"]}


async def _fill(runners: Runners, redis_client: Any) -> dict[str, str]:
    """email: two failed jobs (one failure group), one completed; billing and secret-ops:
    one waiting job each."""
    registry = Registry()
    registry.register("email", mailer, QueueOptions(attempts=1))
    async with Producer(registry) as producer:
        ids = {
            "ok": await producer.add("email", "send", {"to": "a@x", "password": "hunter2"}),
            "bad1": await producer.add("email", "send", {"fail": 1, "host": "10.0.0.7"}),
            "bad2": await producer.add("email", "send", {"fail": 1, "host": "10.0.0.9"}),
            "bill": await producer.add("billing", "charge", {"cents": 5}),
            "secret": await producer.add("secret-ops", "x", {}),
        }
    await runners.start(registry, "email")

    async def finished() -> bool:
        failed = int(redis_client.zcard("bull:email:failed"))
        return failed == 2 and int(redis_client.zcard("bull:email:completed")) == 1

    await wait_for("the email jobs to finish", finished)
    await runners.stop_all()  # what the tools retry stays waiting
    return ids


@pytest.fixture
def mcp_server(redis_server: RedisServer, tmp_path: Path) -> Callable[[dict[str, Any]], Any]:
    database = tmp_path / "mcp.sqlite3"
    env = {"DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    shutil.copyfile(migrated_database({**os.environ, **env}), database)

    @asynccontextmanager
    async def connect(bullpen: dict[str, Any]) -> AsyncIterator[Client]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["manage.py", "bullpen_mcp"],
            cwd=ROOT,
            env={
                **env,
                "BULLPEN_TEST_REDIS_URL": redis_server.url,
                "BULLPEN_TEST_DB": str(database),
                "BULLPEN_TEST_EXTRA": json.dumps(bullpen),
            },
        )
        async with Client(params, read_timeout_seconds=60) as client:
            yield client

    connect.database = database  # type: ignore[attr-defined]
    return connect


def _text(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


def _audit(database: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(database) as db:
        return db.execute(
            "SELECT username, via, action, queue, result, status, error, job_ids "
            "FROM bullpen_auditentry ORDER BY id"
        ).fetchall()


async def test_reads_and_no_actions_without_the_switch(
    mcp_server: Any, runners: Runners, redis_client: Any
) -> None:
    ids = await _fill(runners, redis_client)
    async with mcp_server({"REDACT": ["data.password"]}) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert tools == READS

        listed = _text(await client.call_tool("list_queues", {}))
        assert "- email: waiting 0, active 0, failed 2, delayed 0, prioritized 0, completed 1" in (
            listed
        )
        assert "- billing: waiting 1," in listed

        job = _text(await client.call_tool("get_job", {"queue": "email", "job_id": ids["bad1"]}))
        assert f"Job {ids['bad1']} in email: send — failed" in job
        assert "failed reason: timeout talking to smtp 10.0.0.7" in job
        assert "last stack frame: " in job and "mailer" in job
        ok = _text(await client.call_tool("get_job", {"queue": "email", "job_id": ids["ok"]}))
        assert "hunter2" not in ok and "[redacted]" in ok
        assert 'return value: {"sent": "a@x"}' in ok

        found = _text(await client.call_tool("search", {"query": "reason:smtp"}))
        assert found.startswith("2 match(es)")
        assert f"- email job {ids['bad2']} (failed) send" in found

        groups = _text(await client.call_tool("failure_groups", {"queue": "email"}))
        assert groups.startswith("email: 2 failed jobs, 2 read, 1 failure group(s)")
        assert "- 2 x timeout talking to smtp" in groups

        history = _text(await client.call_tool("history", {"queue": "email", "range": "1h"}))
        assert history.startswith("email, last 1h: ")

        missing = await client.call_tool("get_job", {"queue": "nope", "job_id": "1"})
        assert missing.is_error and "Unknown queue 'nope'" in _text(missing)
        bad_range = await client.call_tool("history", {"queue": "email", "range": "2y"})
        assert bad_range.is_error

        refused = await client.call_tool("retry_job", {"queue": "email", "job_id": ids["bad1"]})
        assert refused.is_error
    assert redis_client.zcard("bull:email:failed") == 2  # nothing retried
    assert _audit(mcp_server.database) == []


async def test_actions_when_allowed_are_checked_and_audited(
    mcp_server: Any, runners: Runners, redis_client: Any
) -> None:
    ids = await _fill(runners, redis_client)
    settings = {
        "MCP": {"ACTIONS": True, "SCOPES": ["mail"]},
        "QUEUE_ACCESS": [
            {"QUEUES": "email", "VIEW": ["*"], "OPERATE": ["scope:mail"]},
            {"QUEUES": "billing", "VIEW": ["user:mcp"]},
        ],
        "QUEUE_OPTIONS": {"email": {"read_only": False}},
    }
    async with mcp_server(settings) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert tools == sorted(READS + ACTIONS)
        listed = _text(await client.call_tool("list_queues", {}))
        assert "secret-ops" not in listed and "- billing:" in listed

        done = await client.call_tool("retry_job", {"queue": "email", "job_id": ids["bad1"]})
        assert not done.is_error and f"Job {ids['bad1']} of email retried" in _text(done)
        assert redis_client.lrange("bull:email:wait", 0, -1) == [ids["bad1"]]

        view_only = await client.call_tool("pause_queue", {"queue": "billing"})
        assert view_only.is_error and "may only view 'billing'" in _text(view_only)
        hidden = await client.call_tool("resume_queue", {"queue": "secret-ops"})
        assert hidden.is_error and "Unknown queue 'secret-ops'" in _text(hidden)
        look = await client.call_tool("get_job", {"queue": "secret-ops", "job_id": ids["secret"]})
        assert look.is_error and _text(look).endswith("Unknown queue 'secret-ops'")

        report = await failure_groups(QueueRef("bull", "email"))
        [group] = report.groups
        assert group.job_ids == [ids["bad2"]]
        retried = await client.call_tool(
            "retry_failure_group", {"queue": "email", "signature": group.signature}
        )
        assert "1 job(s) of email retried" in _text(retried)
    assert redis_client.zcard("bull:email:failed") == 0
    rows = _audit(mcp_server.database)
    assert [row[:6] for row in rows] == [
        ("mcp", "mcp", "retry", "email", "ok", 200),
        ("mcp", "mcp", "pause", "billing", "refused", 403),
        ("mcp", "mcp", "resume", "secret-ops", "refused", 404),
        ("mcp", "mcp", "view", "secret-ops", "refused", 404),
        ("mcp", "mcp", "retry-group", "email", "ok", 200),
    ]
    assert json.loads(rows[0][7]) == [ids["bad1"]]
    assert json.loads(rows[3][7]) == [ids["secret"]]
    assert json.loads(rows[4][7]) == [ids["bad2"]]
    assert "QUEUE_ACCESS" in rows[2][6]


async def test_read_only_refuses_every_action(
    mcp_server: Any, runners: Runners, redis_client: Any
) -> None:
    ids = await _fill(runners, redis_client)
    async with mcp_server({"MCP": {"ACTIONS": True}, "READ_ONLY": True}) as client:
        refused = await client.call_tool("retry_job", {"queue": "email", "job_id": ids["bad1"]})
        assert refused.is_error and "Read-only" in _text(refused)
        paused = await client.call_tool("pause_queue", {"queue": "email"})
        assert paused.is_error
    assert redis_client.zcard("bull:email:failed") == 2
    assert redis_client.hget("bull:email:meta", "paused") is None
    assert [row[2:6] for row in _audit(mcp_server.database)] == [
        ("retry", "email", "refused", 403),
        ("pause", "email", "refused", 403),
    ]
