"""Counts moved by events between exact reads: the transitions, retention and what cannot be
followed, on event entries written out by hand (tests/live/test_count_estimate.py replays the ones
Node BullMQ writes)."""

from __future__ import annotations

from itertools import count

from queues.live.count_estimate import RECENT_ADDS, CountEstimates, Effect, stream_position
from queues.live.events import QueueEvent, parse_entry
from queues.reads.keys import STATES, QueueRef

MAIL = QueueRef("bull", "mail")
_ids = count(1)


def event(kind: str, job_id: str | None = None, /, **fields: str) -> QueueEvent:
    entry = {"event": kind, **fields}
    if job_id is not None:
        entry["jobId"] = job_id
    return parse_entry(f"{1_700_000_000_000 + next(_ids)}-0", entry)


def read(**counts: int) -> dict[str, int]:
    return {state: counts.get(state, 0) for state in STATES}


def estimates_after(counts: dict[str, int], *, paused: bool = False) -> CountEstimates:
    estimates = CountEstimates()
    estimates.set_exact(MAIL, counts, paused, legacy_paused=False)
    return estimates


def test_a_queue_never_read_cannot_be_estimated() -> None:
    estimates = CountEstimates()
    assert not estimates.known(MAIL)
    assert estimates.apply(MAIL, event("active", "1", prev="waiting")) is Effect.UNCERTAIN


def test_a_job_s_life_moves_one_count_at_a_time() -> None:
    estimates = estimates_after(read())
    assert estimates.apply(MAIL, event("added", "1", name="send")) is Effect.NONE
    assert estimates.apply(MAIL, event("waiting", "1")) is Effect.MOVED
    assert estimates.counts(MAIL)["waiting"] == 1
    assert estimates.apply(MAIL, event("active", "1", prev="waiting")) is Effect.MOVED
    assert estimates.apply(MAIL, event("progress", "1", data="50")) is Effect.NONE
    assert estimates.apply(MAIL, event("completed", "1", prev="active")) is Effect.MOVED
    assert estimates.counts(MAIL) == read(completed=1)


def test_a_retry_goes_from_active_to_delayed_and_a_new_delayed_job_from_nowhere() -> None:
    estimates = estimates_after(read(active=1))
    assert estimates.apply(MAIL, event("delayed", "1", delay="500")) is Effect.MOVED
    assert estimates.counts(MAIL) == read(delayed=1)
    estimates.apply(MAIL, event("added", "2"))
    assert estimates.apply(MAIL, event("delayed", "2", delay="60000")) is Effect.MOVED
    assert estimates.counts(MAIL) == read(delayed=2)  # active was not taken from again


def test_a_move_from_an_empty_state_asks_for_a_read() -> None:
    estimates = estimates_after(read())
    assert estimates.apply(MAIL, event("completed", "9", prev="active")) is Effect.UNCERTAIN
    assert estimates.counts(MAIL)["completed"] == 1


def test_removed_jobs_leave_the_state_they_were_in() -> None:
    estimates = estimates_after(read(failed=2))
    assert estimates.apply(MAIL, event("removed", "1", prev="failed")) is Effect.MOVED
    assert estimates.counts(MAIL) == read(failed=1)
    # Without a known state the estimate cannot say which count fell.
    assert estimates.apply(MAIL, event("removed", "2")) is Effect.UNCERTAIN


def test_events_without_a_known_transition_are_uncertain() -> None:
    estimates = estimates_after(read(waiting=3))
    for name in ("stalled", "cleaned", "a-newer-bullmq-event"):
        assert estimates.apply(MAIL, event(name, "1")) is Effect.UNCERTAIN, name
    assert estimates.counts(MAIL) == read(waiting=3)


def test_pause_and_resume_are_followed_and_still_ask_for_a_read() -> None:
    estimates = estimates_after(read(waiting=1))
    assert estimates.apply(MAIL, event("paused")) is Effect.UNCERTAIN
    assert estimates.paused(MAIL)
    assert estimates.apply(MAIL, event("resumed")) is Effect.UNCERTAIN
    assert not estimates.paused(MAIL)


def test_a_legacy_paused_queue_counts_new_jobs_as_paused() -> None:
    estimates = CountEstimates()
    estimates.set_exact(MAIL, read(paused=1), paused=True, legacy_paused=True)
    estimates.apply(MAIL, event("waiting", "2"))
    assert estimates.counts(MAIL) == read(paused=2)


def test_only_prioritized_jobs_waiting_means_the_next_waits_prioritized() -> None:
    estimates = estimates_after(read(prioritized=2))
    estimates.apply(MAIL, event("waiting", "3"))
    assert estimates.counts(MAIL) == read(prioritized=3)
    # A worker takes from prioritized when nothing waits plainly.
    estimates.apply(MAIL, event("active", "3", prev="waiting"))
    assert estimates.counts(MAIL) == read(prioritized=2, active=1)


def test_retention_is_learned_and_unlearned() -> None:
    estimates = estimates_after(read(active=2))
    for job_id in ("1", "2"):
        estimates.apply(MAIL, event("completed", job_id, prev="active"))
    assert estimates.counts(MAIL)["completed"] == 2
    # The exact read shows none: removeOnComplete trims them without an event.
    estimates.set_exact(MAIL, read(active=1), paused=False, legacy_paused=False)
    estimates.apply(MAIL, event("completed", "3", prev="active"))
    assert estimates.counts(MAIL) == read()
    # Once completed grows as announced again, events grow it again.
    estimates.set_exact(MAIL, read(active=1, completed=1), paused=False, legacy_paused=False)
    estimates.apply(MAIL, event("completed", "4", prev="active"))
    assert estimates.counts(MAIL)["completed"] == 2


def test_just_added_ids_are_remembered_up_to_a_limit() -> None:
    estimates = estimates_after(read(active=1))
    for n in range(RECENT_ADDS + 1):
        estimates.apply(MAIL, event("added", f"new-{n}"))
    # The oldest id was forgotten: its delayed event reads as a retry, from active.
    estimates.apply(MAIL, event("delayed", "new-0"))
    assert estimates.counts(MAIL) == read(delayed=1)
    estimates.apply(MAIL, event("delayed", f"new-{RECENT_ADDS}"))
    assert estimates.counts(MAIL) == read(delayed=2)


def test_forget_and_clear() -> None:
    estimates = estimates_after(read(waiting=1))
    estimates.forget(MAIL)
    assert not estimates.known(MAIL)
    estimates.set_exact(MAIL, read(), paused=False, legacy_paused=False)
    estimates.clear()
    assert not estimates.known(MAIL)


def test_event_fields() -> None:
    entry = parse_entry("1700000000123-4", {"event": "progress", "jobId": "7", "data": '{"a": 1}'})
    assert (entry.at_ms, entry.job_id, entry.progress()) == (1_700_000_000_123, "7", {"a": 1})
    assert parse_entry("x", {"event": "progress", "data": "half"}).progress() == "half"
    assert parse_entry("x", {"event": "completed"}).at_ms == 0
    assert parse_entry("1-0", {"event": "completed"}).new_state == "completed"
    assert parse_entry("1-0", {}).event == ""


def test_events_an_exact_read_holds_move_nothing_and_later_ones_move_it() -> None:
    held = [event("waiting", str(n), prev="failed") for n in range(3)]
    later = event("waiting", "3", prev="failed")
    estimates = CountEstimates()
    # The read was made after the first three retries, before the fourth.
    estimates.set_exact(MAIL, read(failed=3, waiting=3), False, False, held[-1].stream_id)
    for each in held:
        assert estimates.apply(MAIL, each) is Effect.NONE
    assert estimates.counts(MAIL) == read(failed=3, waiting=3)
    assert estimates.apply(MAIL, later) is Effect.MOVED
    assert estimates.counts(MAIL) == read(failed=2, waiting=4)


def test_a_new_job_s_added_event_held_by_a_read_still_tells_its_delayed_event() -> None:
    added = event("added", "9")
    estimates = estimates_after(read())
    estimates.apply(MAIL, added)
    estimates.set_exact(MAIL, read(), False, False, added.stream_id)
    assert estimates.apply(MAIL, event("delayed", "9", delay="1000")) is Effect.MOVED
    assert estimates.counts(MAIL) == read(delayed=1)  # not taken from active


def test_a_read_of_a_stream_without_events_holds_none() -> None:
    estimates = CountEstimates()
    estimates.set_exact(MAIL, read(), False, False, "0-0")
    assert estimates.apply(MAIL, event("waiting", "1")) is Effect.MOVED


def test_stream_positions_order_as_redis_orders_ids() -> None:
    assert stream_position("1700000000000-10") > stream_position("1700000000000-9")
    assert stream_position("1700000000001-0") > stream_position("1700000000000-99")
    assert stream_position("1700000000000") == (1700000000000, 0)
    assert stream_position("not an id") == (0, 0)
