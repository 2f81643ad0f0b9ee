"""Which hygiene warnings a queue's figures call for, and what each says in English, German and
French (the BullMQ option named as BullMQ spells it)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.utils import translation

from dashboard.hygiene.texts import text
from queues.hygiene.info import _as_dict
from queues.hygiene.warnings import KEEP_LIMIT, Figures, HygieneWarning, warnings_for

CALM = Figures(
    completed_kept=KEEP_LIMIT,
    failed_kept=10,
    events_length=500,
    max_len_events=10_000,
    metrics_keys=1,
    legacy_repeatables=0,
)


def codes(found: Figures) -> list[str]:
    return [warning.code for warning in warnings_for(found)]


def test_a_queue_within_every_bound_is_not_warned() -> None:
    # Bullpen's own runner keeps exactly 1,000 completed jobs: not warned.
    assert warnings_for(CALM) == []


def test_more_than_a_thousand_kept_finished_jobs_are_warned_with_their_option() -> None:
    found = replace(CALM, completed_kept=KEEP_LIMIT + 1, failed_kept=1200)
    assert [(w.code, w.option, w.figures) for w in warnings_for(found)] == [
        ("keeps-completed", "removeOnComplete", {"kept": 1001}),
        ("keeps-failed", "removeOnFail", {"kept": 1200}),
    ]


@pytest.mark.parametrize(("length", "warned"), [(19, False), (20, True), (120, True)])
def test_an_events_stream_is_warned_from_its_cap_on(length: int, warned: bool) -> None:
    found = replace(CALM, events_length=length, max_len_events=20)
    assert codes(found) == (["events-at-cap"] if warned else [])


def test_missing_metrics_are_warned_only_while_jobs_finish() -> None:
    assert codes(replace(CALM, metrics_keys=0)) == ["no-metrics"]
    idle = replace(CALM, metrics_keys=0, completed_kept=0, failed_kept=0)
    assert codes(idle) == []


def test_legacy_repeatables_are_counted_in_their_warning() -> None:
    [warning] = warnings_for(replace(CALM, legacy_repeatables=3))
    assert warning.as_json() == {
        "code": "legacy-repeatable",
        "option": "upsertJobScheduler",
        "count": 3,
    }


@pytest.mark.parametrize(
    ("language", "kept", "needle"),
    [("en", "1,200", "are kept"), ("de", "1.200", "bleiben"), ("fr", "1\xa0200", "conservées")],
)
def test_each_warning_names_its_option_in_every_language(
    language: str, kept: str, needle: str
) -> None:
    found = Figures(1200, 1200, 20, 20, 0, 2)
    with translation.override(language):
        said = {w.code: text(w) for w in warnings_for(found)}
    assert set(said) == {
        "keeps-completed",
        "keeps-failed",
        "events-at-cap",
        "no-metrics",
        "legacy-repeatable",
    }
    assert said["keeps-completed"].startswith(kept) and needle in said["keeps-completed"]
    for code, option in [
        ("keeps-completed", "removeOnComplete"),
        ("keeps-failed", "removeOnFail"),
        ("events-at-cap", "streams.events.maxLen"),
        ("no-metrics", "metrics"),
        ("legacy-repeatable", "upsertJobScheduler"),
    ]:
        assert option in said[code]


def test_an_unknown_code_is_shown_as_itself() -> None:
    assert text(HygieneWarning("something-new", "x")) == "something-new"


def test_the_meta_hash_is_read_from_a_flat_reply_or_a_clusters_dict() -> None:
    flat = ["version", "bullmq:6.7.0", "opts.maxLenEvents", "20"]
    assert _as_dict(flat) == {"version": "bullmq:6.7.0", "opts.maxLenEvents": "20"}
    assert _as_dict({"paused": "1"}) == {"paused": "1"}
    assert _as_dict(None) == {}
