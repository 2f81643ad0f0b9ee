"""A worker process's several Redis connections make one row: pure logic, no Redis."""

from __future__ import annotations

import base64

import pytest

from dashboard.templatetags.bullpen import seconds_span
from queues.reads.keys import QueueRef
from queues.reads.workers import by_process, host_of, match_workers, parse_client_list

MAIL = QueueRef("bull", "mail")
NODE_NAME = "bull:" + base64.b64encode(b"mail").decode()


def client_list(*rows: tuple[str, str, int, int]) -> str:
    """CLIENT LIST's text for connections given as (addr, name, age, idle)."""
    return "\n".join(
        f"id={i} addr={addr} laddr=127.0.0.1:6379 fd=8 name={name} age={age} idle={idle} cmd=x"
        for i, (addr, name, age, idle) in enumerate(rows)
    )


def test_connections_of_one_worker_make_one_row() -> None:
    text = client_list(
        ("10.0.0.5:51000", "bull:mail:w:box-12", 300, 40),  # Python: normal connection
        ("10.0.0.5:51002", "bull:mail:w:box-12", 290, 2),  # Python: blocking connection
        ("10.0.0.6:40000", NODE_NAME, 50, 0),  # Node, unnamed
        ("10.0.0.6:40001", NODE_NAME, 55, 9),
        ("10.0.0.7:40000", NODE_NAME, 5, 5),  # another Node worker, another host
        ("10.0.0.5:51009", "bull:mail:w:box-13", 10, 10),  # another Python process
        ("10.0.0.5:51010", "bull:other:w:box-12", 10, 10),  # another queue
        ("10.0.0.5:51011", "bull:mail:qe", 10, 10),  # a QueueEvents listener
    )
    connections = match_workers(parse_client_list(text), [MAIL])
    assert len(connections) == 6
    rows = [
        (p.library, p.worker_name, p.host, p.connections, p.age_s, p.idle_s)
        for p in by_process(connections)
    ]
    assert rows == [
        ("node", "", "10.0.0.6", 2, 55, 0),
        ("node", "", "10.0.0.7", 1, 5, 5),
        ("python", "box-12", "10.0.0.5", 2, 300, 2),
        ("python", "box-13", "10.0.0.5", 1, 10, 10),
    ]


def test_host_of_addresses() -> None:
    assert host_of("127.0.0.1:6379") == "127.0.0.1"
    assert host_of("[::1]:50123") == "[::1]"
    assert host_of("/run/redis/redis.sock:0") == "/run/redis/redis.sock"
    assert host_of("") == ""


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (59, "59 s"), (61, "1 min 1 s"), (3600, "1 h 0 min"), (93784, "1 d 2 h")],
)
def test_seconds_span(seconds: int, text: str) -> None:
    assert seconds_span(seconds) == text
