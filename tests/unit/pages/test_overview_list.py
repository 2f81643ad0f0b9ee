"""The overview's list: filter, problems, order, groups and pages, on queues as the API has them."""

from __future__ import annotations

from typing import Any

from dashboard.pages.overview_list import ListQuery, alert_row_class, list_queues, queue_problems
from queues.reads.dead_letters import dead_letter_name

STATES = (
    "waiting",
    "active",
    "prioritized",
    "delayed",
    "waiting-children",
    "paused",
    "completed",
    "failed",
)


def queue(name: str, prefix: str = "bull", paused: bool = False, **counts: int) -> dict[str, Any]:
    return {
        "name": name,
        "prefix": prefix,
        "slug": name if prefix == "bull" else f"{prefix}:{name}",
        "displayName": name,
        "paused": paused,
        "counts": {state: counts.get(state.replace("-", "_"), 0) for state in STATES},
        "alerts": [],
        "problems": [],
    }


def tenants() -> list[dict[str, Any]]:
    return [
        queue("t2-mail", waiting=5),
        queue("t1-mail", failed=3, completed=10),
        queue("t1-billing", waiting=1, paused=True),
        queue("t3-billing", waiting=7, failed=1),
        queue("reports", prefix="other", delayed=2),
    ]


def names(queues: list[dict[str, Any]]) -> list[str]:
    return [q["name"] for q in queues]


def test_names_in_order_and_totals_over_every_queue() -> None:
    listing = list_queues(tenants(), ListQuery())
    assert names(listing.queues) == ["reports", "t1-billing", "t1-mail", "t2-mail", "t3-billing"]
    assert listing.totals["waiting"] == 13 and listing.totals["failed"] == 4
    assert (listing.total, listing.matching, listing.pages) == (5, 5, 1)


def test_the_filter_matches_part_of_a_name_whatever_the_case() -> None:
    listing = list_queues(tenants(), ListQuery(text=" MAIL "))
    assert names(listing.queues) == ["t1-mail", "t2-mail"]
    assert (listing.total, listing.matching) == (5, 2)
    assert list_queues(tenants(), ListQuery(text="nothing")).queues == []


def test_sorting_by_a_count_puts_the_most_first_and_keeps_names_in_order_on_ties() -> None:
    listing = list_queues(tenants(), ListQuery(sort="-waiting"))
    assert names(listing.queues) == ["t3-billing", "t2-mail", "t1-billing", "reports", "t1-mail"]
    fewest = list_queues(tenants(), ListQuery(sort="waiting"))
    assert names(fewest.queues)[:3] == ["reports", "t1-mail", "t1-billing"]
    assert names(list_queues(tenants(), ListQuery(sort="-name")).queues)[0] == "t3-billing"


def test_only_problems_keeps_failed_paused_alerting_and_unserved_queues() -> None:
    queues = tenants()
    queues[0]["workers"] = 0  # t2-mail: jobs wait, no worker
    queues[3]["workers"] = 2
    queues[4]["alerts"] = [{"rule": "delayed", "value": 2, "threshold": 1}]
    listing = list_queues(queues, ListQuery(problems=True))
    assert names(listing.queues) == ["reports", "t1-billing", "t1-mail", "t2-mail", "t3-billing"]
    queues[3]["counts"]["failed"] = 0
    queues[4]["alerts"] = []
    assert names(list_queues(queues, ListQuery(problems=True)).queues) == [
        "t1-billing",
        "t1-mail",
        "t2-mail",
    ]
    assert queue_problems(queues[0]) == ["jobs wait and no worker is connected"]
    assert queue_problems(queues[2]) == ["paused"]


def test_held_alerts_still_count_as_problems_but_make_the_row_quieter() -> None:
    """Only problems lists a queue whose alerts are all silenced: it still fires, and the
    person on call sees it quieter, with who holds it (the row's badges)."""
    mail = queue("mail")
    assert alert_row_class(mail) == ""
    firing = {"rule": "waiting", "value": 3, "threshold": 1, "status": "firing"}
    silenced = {"rule": "delayed", "value": 9, "threshold": 1, "status": "silenced"}
    acknowledged = {"rule": "failed_last_hour", "value": 2, "threshold": 1}
    acknowledged["status"] = "acknowledged"
    mail["alerts"] = [silenced]
    assert queue_problems(mail) == ["alert: delayed (silenced)"]
    assert alert_row_class(mail) == "alert-held"
    assert names(list_queues([mail], ListQuery(problems=True)).queues) == ["mail"]
    mail["alerts"] = [silenced, acknowledged]
    assert alert_row_class(mail) == "alert-held"
    mail["alerts"] = [silenced, firing]
    assert queue_problems(mail) == ["alert: delayed (silenced)", "alert: waiting"]
    assert alert_row_class(mail) == "alerting"
    # An alert without a status (as an older caller builds it) fires.
    mail["alerts"] = [{"rule": "waiting", "value": 3, "threshold": 1}]
    assert alert_row_class(mail) == "alerting"


def test_a_dead_letter_queue_without_workers_is_not_a_problem() -> None:
    dead = queue(dead_letter_name(), waiting=4)
    dead["workers"] = 0
    assert queue_problems(dead) == []


def test_groups_by_the_part_before_or_after_the_delimiter_or_by_prefix() -> None:
    heads = list_queues(tenants(), ListQuery(group="head"))
    assert [g.key for g in heads.groups] == ["reports", "t1", "t2", "t3"]
    t1 = heads.groups[1]
    assert (t1.queues, t1.matching, t1.paused, t1.problems) == (2, 2, 1, 2)
    assert t1.counts["waiting"] == 1 and t1.counts["failed"] == 3 and t1.counts["completed"] == 10
    tails = list_queues(tenants(), ListQuery(group="tail", sort="-waiting"))
    assert [g.key for g in tails.groups] == ["billing", "mail", "reports"]
    prefixes = list_queues(tenants(), ListQuery(group="prefix"))
    assert [(g.key, g.queues) for g in prefixes.groups] == [("bull", 4), ("other", 1)]
    dots = list_queues([queue("a.b"), queue("a.c")], ListQuery(group="head", delimiter="."))
    assert [(g.key, g.queues) for g in dots.groups] == [("a", 2)]


def test_a_filtered_group_keeps_the_counts_of_all_its_queues() -> None:
    listing = list_queues(tenants(), ListQuery(group="head", text="billing"))
    assert [(g.key, g.matching, g.queues) for g in listing.groups] == [("t1", 1, 2), ("t3", 1, 1)]
    assert listing.groups[0].counts["failed"] == 3


def test_within_lists_one_groups_queues() -> None:
    listing = list_queues(tenants(), ListQuery(group="head", within="t1", sort="-failed"))
    assert listing.groups == []
    assert names(listing.queues) == ["t1-mail", "t1-billing"]


def test_pages_cut_the_list_and_a_page_past_the_end_shows_the_last() -> None:
    many = [queue(f"q{n:03}") for n in range(250)]
    first = list_queues(many, ListQuery(per_page=100))
    assert (len(first.queues), first.pages, first.page) == (100, 3, 1)
    last = list_queues(many, ListQuery(per_page=100, page=9))
    assert last.page == 3 and names(last.queues)[0] == "q200" and len(last.queues) == 50


def test_query_strings_leave_out_defaults_and_flip_the_order_of_the_current_column() -> None:
    assert ListQuery().params() == ""
    assert ListQuery(text="a b", page=2).params() == "q=a+b&page=2"
    assert ListQuery(group="head").params(within="t1") == "group=head&within=t1"
    assert ListQuery(group="head", within="t1").params(within=None) == "group=head"
    assert ListQuery().sorted_by("failed") == "sort=-failed"
    assert ListQuery(sort="-failed").sorted_by("failed") == "sort=failed"
    assert ListQuery().sorted_by("name") == "sort=-name"
    assert ListQuery(sort="-name").sorted_by("name") == ""
