"""What alert notices are sent: one when a rule starts firing on a queue, none while it goes on,
a resolved one when it stops, and a cooldown per queue and rule against flapping (pure logic)."""

from __future__ import annotations

import json

from queues.alerts.state import FIRING, RESOLVED, AlertTracker, Notice
from queues.alerts.thresholds import Alert

WAITING = Alert("waiting", 12, 10)
FAILED = Alert("failed_last_hour", 150, 100)
COOLDOWN = 900.0


def told(notices: list[Notice]) -> list[tuple[str, str, str]]:
    return [(n.status, n.queue, n.alert.rule) for n in notices]


def test_a_rule_is_told_once_when_it_starts_and_once_when_it_ends() -> None:
    tracker = AlertTracker(COOLDOWN)
    assert told(tracker.observe({"mail": [WAITING], "shop": []}, 0)) == [
        (FIRING, "mail", "waiting")
    ]
    # Still firing, with another value: nothing new to say.
    assert tracker.observe({"mail": [Alert("waiting", 40, 10)]}, 30) == []
    (resolved,) = tracker.observe({"mail": []}, 60)
    assert (resolved.status, resolved.queue) == (RESOLVED, "mail")
    assert resolved.alert == Alert("waiting", 40, 10)  # the last value seen while it fired
    assert tracker.observe({"mail": []}, 90) == []


def test_rules_and_queues_are_told_apart() -> None:
    tracker = AlertTracker(COOLDOWN)
    first = tracker.observe({"mail": [WAITING], "shop": [WAITING]}, 0)
    assert told(first) == [(FIRING, "mail", "waiting"), (FIRING, "shop", "waiting")]
    assert told(tracker.observe({"mail": [WAITING, FAILED], "shop": []}, 10)) == [
        (FIRING, "mail", "failed_last_hour"),
        (RESOLVED, "shop", "waiting"),
    ]


def test_a_rule_firing_again_within_the_cooldown_waits_for_its_end() -> None:
    tracker = AlertTracker(COOLDOWN)
    assert len(tracker.observe({"mail": [WAITING]}, 0)) == 1
    assert told(tracker.observe({"mail": []}, 60)) == [(RESOLVED, "mail", "waiting")]
    # Flapping: it fires again 2 minutes after it was told, then stops, unseen.
    assert tracker.observe({"mail": [WAITING]}, 120) == []
    assert tracker.observe({"mail": []}, 180) == []  # its start was not told: nor its end
    assert tracker.observe({"mail": [WAITING]}, 600) == []
    # Still firing when the cooldown is over: told then, and its end after it.
    assert told(tracker.observe({"mail": [WAITING]}, COOLDOWN)) == [(FIRING, "mail", "waiting")]
    assert told(tracker.observe({"mail": []}, COOLDOWN + 1)) == [(RESOLVED, "mail", "waiting")]


def test_after_the_cooldown_a_new_firing_is_told_at_once() -> None:
    tracker = AlertTracker(60)
    tracker.observe({"mail": [WAITING]}, 0)
    tracker.observe({"mail": []}, 10)
    assert told(tracker.observe({"mail": [WAITING]}, 61)) == [(FIRING, "mail", "waiting")]


def test_a_queue_gone_from_the_reading_is_resolved() -> None:
    tracker = AlertTracker(COOLDOWN)
    tracker.observe({"mail": [WAITING]}, 0)
    assert told(tracker.observe({}, 10)) == [(RESOLVED, "mail", "waiting")]


def test_the_state_survives_a_change_of_sender() -> None:
    first = AlertTracker(COOLDOWN)
    first.observe({"mail": [WAITING], "shop": [FAILED]}, 0)
    first.observe({"mail": [WAITING], "shop": []}, 10)
    dumped = json.loads(json.dumps(first.dump()))  # as kept in Redis
    second = AlertTracker(COOLDOWN)
    second.load(dumped)
    # What the first sender told is not told again; its cooldown goes on.
    assert second.observe({"mail": [WAITING], "shop": [FAILED]}, 20) == []
    assert told(second.observe({"mail": []}, 30)) == [(RESOLVED, "mail", "waiting")]


def test_signatures_and_odd_queue_names_survive_the_dump() -> None:
    new = Alert("new_failure_signatures", 1, 0, ("Timeout after <n> ms @ db.js",))
    first = AlertTracker(COOLDOWN)
    first.observe({"bull:a\x00b": [new]}, 0)
    second = AlertTracker(COOLDOWN)
    second.load(json.loads(json.dumps(first.dump())))
    (resolved,) = second.observe({}, 5)
    assert (resolved.queue, resolved.alert) == ("bull:a\x00b", new)


def test_an_unreadable_state_is_dropped_not_fatal() -> None:
    tracker = AlertTracker(COOLDOWN)
    tracker.load({"mail\x00waiting": {"firing": True}, "no-separator": {}})
    assert told(tracker.observe({"mail": [WAITING]}, 0)) == [(FIRING, "mail", "waiting")]


def test_resolved_entries_are_forgotten_once_their_cooldown_is_over() -> None:
    tracker = AlertTracker(60)
    tracker.observe({"mail": [WAITING]}, 0)
    tracker.observe({"mail": []}, 10)
    assert tracker.dump()  # its cooldown still counts
    tracker.observe({}, 61)
    assert tracker.dump() == {}
