"""Alert notices not yet delivered: kept per target still owed, tried again with a doubling
pause, dropped with their alert's end when their start never reached the target, bounded
(pure logic)."""

from __future__ import annotations

import json

import pytest

from queues.alerts import undelivered as alert_undelivered
from queues.alerts.state import FIRING, RESOLVED, Notice
from queues.alerts.thresholds import Alert
from queues.alerts.undelivered import Undelivered, pause_after

WAITING = Alert("waiting", 12, 10)


def test_a_notice_is_kept_for_the_targets_it_missed_until_it_reached_them() -> None:
    kept = Undelivered()
    notice = Notice(FIRING, "mail", WAITING)
    kept.tried(notice, {"webhook:a"}, now=100)
    assert kept.due(100) == []
    (due,) = kept.due(100 + pause_after(1))
    assert (due.notice, due.owed, due.rounds) == (notice, {"webhook:a"}, 1)
    kept.tried(notice, {"webhook:a"}, now=200)
    assert kept.due(200 + pause_after(1)) == []  # the pause doubled
    assert kept.due(200 + pause_after(2))[0].rounds == 2
    kept.tried(notice, set(), now=300)
    assert len(kept) == 0 and notice.id not in kept


def test_the_pause_doubles_up_to_its_most() -> None:
    pauses = [pause_after(rounds) for rounds in range(1, 10)]
    assert pauses[:3] == [30.0, 60.0, 120.0]
    assert max(pauses) == pauses[-1] == alert_undelivered.RETRY_MOST_S


def test_an_end_drops_a_start_that_never_reached_its_target() -> None:
    kept = Undelivered()
    start = Notice(FIRING, "mail", WAITING)
    other = Notice(FIRING, "shop", WAITING)
    kept.tried(start, {"webhook:a"}, now=0)
    kept.tried(other, {"webhook:a"}, now=0)
    end = Notice(RESOLVED, "mail", WAITING)
    assert kept.never_told(end) == {"webhook:a"}
    assert start.id not in kept and other.id in kept
    # An end whose start reached everyone goes to everyone.
    assert kept.never_told(Notice(RESOLVED, "shop", Alert("delayed", 2, 1))) == set()


def test_at_most_so_many_are_kept_the_oldest_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alert_undelivered, "MOST_KEPT", 3)
    kept = Undelivered()
    notices = [Notice(FIRING, f"q{n}", WAITING) for n in range(5)]
    for notice in notices:
        kept.tried(notice, {"e-mail"}, now=0)
    assert [k.notice for k in kept.due(1000)] == notices[2:]


def test_the_state_survives_a_takeover_as_json() -> None:
    kept = Undelivered()
    notice = Notice(FIRING, "mail", Alert("new_failure_signatures", 1, 0, ("boom @ x.py",)))
    kept.tried(notice, {"e-mail", "webhook:a"}, now=5)
    taken = Undelivered()
    taken.load(json.loads(json.dumps(kept.dump())))
    assert taken.due(1000) == kept.due(1000)
    assert taken.due(1000)[0].notice.id == notice.id
    # Whatever else is stored is dropped, not fatal.
    taken.load([{"notice": {"status": "odd"}}, "x", None])
    assert len(taken) == 0
    taken.load({"not": "a list"})
    assert len(taken) == 0
