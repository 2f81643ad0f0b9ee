"""The live follower's parts that need no Redis: its chore schedule, the row-read budget, and
what the pages watch (one process's registry, and every process's union as the reader keeps it)."""

from __future__ import annotations

import time
from dataclasses import fields

from queues.live.interest import Everyone, Interest
from queues.live.schedule import Chores, Later, Periodic, TokenBucket
from queues.live.watching import Watching


def test_a_chore_is_due_at_once_then_once_per_period_unless_hurried() -> None:
    chore = Periodic(60.0)
    assert chore.due()
    assert not chore.due()
    chore.hurry()
    assert chore.due()
    assert not chore.due()


def test_every_chore_is_due_after_a_hurry_all() -> None:
    periodic = (Periodic(60.0) for _ in fields(Chores)[:-1])
    chores = Chores(*periodic, resend_again=Later())
    assert all([chores.renew_lease.due(), chores.full_refresh.due(), chores.tail_logs.due()])
    assert not chores.full_refresh.due()
    chores.hurry_all()
    assert chores.renew_lease.due() and chores.full_refresh.due() and chores.tail_logs.due()


def test_a_later_chore_is_due_once_after_its_delay_and_only_when_armed() -> None:
    later = Later()
    assert not later.due()
    later.arm(0.2)
    assert not later.due()
    time.sleep(0.25)
    assert later.due()
    assert not later.due()


def test_row_reads_are_granted_within_the_rate_and_never_beyond_one_second() -> None:
    budget = TokenBucket(per_second=10.0, batch=3)
    assert budget.take(2) == 0  # nothing saved up yet
    budget.filled_at -= 0.35  # as if 0.35 s had passed since
    assert budget.take(2) == 2
    budget.filled_at -= 1.5
    assert budget.take(50) == 10  # one second's worth at most


def test_a_bucket_is_ready_once_one_read_is_saved_up() -> None:
    bucket = TokenBucket(5.0, 5)
    bucket.tokens, bucket.filled_at = 0.0, time.monotonic()
    assert not bucket.ready()
    bucket.filled_at -= 0.25  # a quarter of a second at 5 a second: one read and a bit
    assert bucket.ready()
    assert bucket.take(1) == 1
    assert not bucket.ready()


def test_a_bucket_is_ready_for_many_wanted_once_a_batch_is_saved_up() -> None:
    bucket = TokenBucket(5.0, 5)
    bucket.tokens, bucket.filled_at = 0.0, time.monotonic() - 0.25
    assert bucket.ready(1) and not bucket.ready(50_000)  # take(50_000) would grant none yet
    assert bucket.take(50_000) == 0
    bucket.filled_at -= 1.0
    assert bucket.ready(50_000) and bucket.take(50_000) == 5


def test_a_pass_that_comes_late_still_spends_what_was_saved_up_for_it() -> None:
    # Quiet re-reads: a batch is a second's reads, two seconds are saved up.
    bucket = TokenBucket(5.0, 5, saved_for=2.0)
    bucket.tokens, bucket.filled_at = 0.0, time.monotonic() - 0.9
    assert bucket.take(50) == 0  # 4.5 saved: not yet a batch
    bucket.filled_at -= 0.9  # the next pass 0.9 s later: 9 saved, none lost
    assert bucket.take(50) == 9
    bucket.filled_at -= 5.0  # a pass five seconds late: two seconds' worth at most
    assert bucket.take(50) == 10
    # With one second saved up (the default), the same late pass gets a second's worth.
    one = TokenBucket(5.0, 5)
    one.filled_at -= 1.8
    assert one.take(50) == 5


def test_row_reads_wait_for_a_whole_batch_unless_fewer_are_wanted() -> None:
    budget = TokenBucket(per_second=1.0, batch=3)
    budget.filled_at -= 1.1  # as if 1.1 s had passed since
    assert budget.take(5) == 0  # one read saved up, a batch is three
    assert budget.take(1) == 1


def test_the_registry_counts_watchers_and_marks_only_what_changes_the_published_set() -> None:
    registry = Interest()
    registry.watch_queue("mail")
    registry.changed = False  # as after publishing
    registry.watch_queue("mail")  # a second tab on the same queue
    assert not registry.changed
    registry.unwatch_queue("mail")
    assert registry.queues == {"mail": 1} and not registry.changed
    registry.unwatch_queue("mail")
    assert registry.empty and registry.changed


def test_watching_goes_idle_without_watchers_and_wakes_with_the_first() -> None:
    watching = Watching()
    assert not watching.everywhere(Everyone(set(), set(), False))
    assert watching.idle_since is not None and not watching.idle  # not for IDLE_AFTER yet
    watching.idle_since = time.monotonic() - Watching.IDLE_AFTER - 1
    assert watching.idle
    assert watching.everywhere(Everyone({"mail"}, set(), False))  # woke: the streams start afresh
    assert not watching.idle
    assert not watching.everywhere(Everyone({"mail"}, set(), False))  # already awake


def test_this_processs_own_pages_count_before_the_exchange() -> None:
    watching = Watching()
    watching.everywhere(Everyone({"mail"}, set(), False))
    registry = Interest()
    registry.watch_job("img", "7")
    registry.watch_overview()
    watching.add_own(registry)
    assert watching.queues == {"mail"}
    assert watching.jobs == {("img", "7")}
    assert watching.overview and watching.idle_since is None


def test_rows_an_overview_shows_are_counted_per_overview() -> None:
    registry = Interest()
    registry.show(["mail", "img"])
    registry.show(["mail"])
    assert registry.shown == {"mail": 2, "img": 1} and registry.changed
    registry.changed = False
    registry.unshow(["mail"])
    assert not registry.changed  # another overview still shows it
    registry.unshow(["mail", "img"])
    assert not registry.shown and registry.changed
    registry.watch_overview()
    registry.show(["mail"])
    watching = Watching()
    watching.everywhere(Everyone(set(), set(), True, {"img"}))
    watching.add_own(registry)
    assert watching.shown == {"img", "mail"}
