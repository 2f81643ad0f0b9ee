"""What a live websocket may ask, on its own: the watch message's form, the registry's and the
sockets' bounds, and the LIVE settings that set them."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from dashboard.auth.principal import ANONYMOUS, Principal
from dashboard.forms.answer import valid
from dashboard.forms.watch import WatchForm
from dashboard.live import socket_limits
from queues.config import problems as conf_problems
from queues.errors import BadParameter
from queues.live import interest
from queues.live.interest import Interest


def watch(message: dict[str, Any]) -> dict[str, Any]:
    return valid(WatchForm(message)).cleaned_data


def refusal(message: dict[str, Any]) -> str:
    with pytest.raises(BadParameter) as refused:
        watch(message)
    return str(refused.value)


def test_a_page_s_watch_messages_are_read_by_the_form() -> None:
    asked = watch({"watch": "queue", "queue": "img", "state": "failed", "page": 2, "per_page": 20})
    assert (asked["watch"], asked["queue"], asked["state"]) == ("queue", "img", "failed")
    assert (asked["page"], asked["per_page"], asked["order"]) == (2, 20, "desc")
    assert watch({"reset": True})["reset"] and not watch({})["reset"]
    assert watch({})["watch"] == "" and watch({"watch": None})["watch"] == ""
    assert watch({"watch": "job", "queue": "img", "id": "7"})["id"] == "7"


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"watch": "everything"}, "watch must be one of: overview, queue, job"),
        ({"watch": 3}, "watch must be text"),
        ({"watch": "queue"}, "watch queue needs a queue"),
        ({"watch": "job", "queue": "img"}, "watch job needs a job id"),
        ({"watch": "job", "queue": "img", "id": "x" * 1025}, "id is too long (at most 1024"),
        ({"watch": "queue", "queue": "q" * 1025}, "queue is too long (at most 1024"),
        ({"watch": "queue", "queue": "img", "page": "two"}, "page must be a whole number"),
        ({"watch": "queue", "queue": "img", "state": "lost"}, "Unknown state 'lost'"),
        ({"watch": "queue", "queue": "img", "per_page": 5000}, "per_page must be between"),
        ({"watch": "queue", "queue": "img", "order": "up"}, "order must be 'asc' or 'desc'"),
        ({"reset": "yes"}, "reset must be true or false"),
        ({"viewer": "v" * 201}, "viewer is too long"),
    ],
)
def test_watch_messages_out_of_bounds_are_refused_with_a_reason(
    message: dict[str, Any], said: str
) -> None:
    assert said in refusal(message)


def test_the_registry_is_bounded_in_entries_and_name_length() -> None:
    registry = Interest()
    assert not registry.watch_job("mail", "x" * (interest.MAX_NAME + 1))
    assert not registry.watch_queue("q" * (interest.MAX_NAME + 1))
    for number in range(interest.MAX_ENTRIES):
        assert registry.watch_job("mail", str(number))
    assert not registry.watch_job("mail", "one more") and not registry.watch_queue("mail")
    assert registry.watch_job("mail", "7")  # one more watcher of a watched job costs nothing
    assert registry.size == interest.MAX_ENTRIES and registry.jobs[("mail", "7")] == 2
    registry.unwatch_job("mail", "0")
    assert registry.watch_queue("mail")


def test_sockets_are_counted_per_client() -> None:
    operator = socket_limits.client_of(Principal("operator", "basic"), {"client": ("10.0.0.1", 1)})
    anonymous = socket_limits.client_of(ANONYMOUS, {"client": ("10.0.0.1", 2)})
    assert operator == "basic:operator" and anonymous == "address:10.0.0.1"
    assert socket_limits.enter(anonymous, 2) and socket_limits.enter(anonymous, 2)
    assert not socket_limits.enter(anonymous, 2)
    assert socket_limits.enter(operator, 2)
    socket_limits.leave(anonymous)
    assert socket_limits.enter(anonymous, 2)


@pytest.mark.parametrize(
    ("live", "said"),
    [
        ({"max_watches": 0}, "BULLPEN['LIVE']['max_watches'] must be a whole number above 0"),
        ({"max_sockets_per_client": 2.5}, "'max_sockets_per_client'] must be a whole number"),
        ({"max_watches": True}, "'max_watches'] must be a whole number above 0"),
        ({"auth_recheck_interval": 0}, "'auth_recheck_interval'] must be a number of seconds"),
    ],
)
def test_live_bounds_are_checked(live: dict[str, Any], said: str) -> None:
    with override_settings(BULLPEN={"LIVE": live}):
        found = conf_problems.problems()
    assert [p.code for p in found] == ["E014"] and said in found[0].message


def test_good_live_bounds_pass() -> None:
    live = {"max_watches": 5, "max_sockets_per_client": 3, "auth_recheck_interval": 0.5}
    with override_settings(BULLPEN={"LIVE": live}):
        assert conf_problems.problems() == []
