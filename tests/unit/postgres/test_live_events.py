"""BullMQ's Postgres event rows read as the Redis stream's entries: the same events, fields as
strings, so that one follower's code serves both stores' live rows."""

from __future__ import annotations

from queues.postgres.live_rows import queue_event


def test_an_event_row_reads_as_the_streams_entry() -> None:
    done = queue_event(
        {"id": 41, "event": "completed", "data": {"jobId": "7", "returnvalue": '{"ok":1}'}}, 1000
    )
    assert (done.event, done.job_id, done.new_state, done.at_ms) == (
        "completed",
        "7",
        "completed",
        1000,
    )
    assert done.fields["returnvalue"] == '{"ok":1}' and done.stream_id == "1000-41"
    moved = queue_event(
        {"id": 42, "event": "progress", "data": {"jobId": "7", "data": '{"pct": 50}'}}, 1
    )
    assert moved.progress() == {"pct": 50} and moved.new_state is None
    # Numbers and nested values come as BullMQ's Redis events write them: as text.
    cleaned = queue_event({"id": 43, "event": "cleaned", "data": {"count": 3, "x": {"a": 1}}}, 1)
    assert cleaned.job_id is None and cleaned.fields == {
        "count": "3",
        "x": '{"a": 1}',
        "event": "cleaned",
    }
    # A malformed row (no data, no event) is an event of nothing, not an error.
    empty = queue_event({"id": 44, "data": None}, 1)
    assert (empty.event, empty.job_id, empty.new_state) == ("", None, None)
