"""Pure parts of serving a Redis Cluster with a master down: where a stream read goes, how a
raw stream entry reads, which queues are remembered as unreachable, how a summary says so."""

from __future__ import annotations

from queues.errors import NodeUnreachable
from queues.live.streams import _as_fields
from queues.reads.counts import _summary
from queues.reads.keys import QueueRef
from queues.redis import reachability
from queues.redis.fastpipe import _key_of

REF = QueueRef("bull", "{t1}-mail", "default")
OTHER = QueueRef("bull", "{t2}-mail", "default")


def test_a_stream_read_goes_where_its_first_stream_lives() -> None:
    command = ("XREAD", "COUNT", 1000, "STREAMS", "bull:{t1}-mail:events", "0-0")
    assert _key_of(command) == "bull:{t1}-mail:events"
    assert _key_of(("XREAD", "COUNT", 1000)) is None  # no stream named: no place
    assert _key_of(("LLEN", "bull:{t1}-mail:wait")) == "bull:{t1}-mail:wait"


def test_a_raw_entry_reads_as_redis_py_gives_it() -> None:
    assert _as_fields(["event", "added", "jobId", "7"]) == {"event": "added", "jobId": "7"}
    assert _as_fields({"event": "added"}) == {"event": "added"}
    assert _as_fields(None) == {}


def test_a_queue_whose_master_is_down_reads_as_unreachable_not_as_empty() -> None:
    lost = NodeUnreachable("127.0.0.1:7001", "Connection refused")
    summary = _summary(REF, ("waiting",), [lost, lost])
    assert summary.unreachable and "127.0.0.1:7001" in summary.unreachable
    read = _summary(REF, ("waiting",), [3, [None] * 6])
    assert read.unreachable is None and read.counts["waiting"] == 3


def test_queues_down_are_forgotten_once_read_again() -> None:
    reachability.forget()
    reachability.note_queues([], {REF: "node down", OTHER: "node down"})
    assert reachability.queues_down() == {REF: "node down", OTHER: "node down"}
    reachability.note_queues([REF], {})
    assert reachability.queues_down() == {OTHER: "node down"}
    reachability.forget()
    assert reachability.queues_down() == {}
