"""Field paths compiled once and applied to parsed job fields (no Redis)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import override_settings

from queues.reads.job_fields import job_from_hash
from queues.reads.redaction import MARKER, PathError, compile_paths, mask, path_problem, redact_job

pytestmark = pytest.mark.unit


def masked(paths: list[str], root: str, value: Any) -> Any:
    job = {root: value, "truncated": {}, "invalid": []}
    redact_job(job, compile_paths(paths))
    return job[root]


def test_a_named_key_is_masked_and_kept() -> None:
    data = {"user": "ada", "password": "hunter2", "card": {"number": "4111", "exp": "12/30"}}
    assert masked(["data.password", "data.card.number"], "data", data) == {
        "user": "ada",
        "password": MARKER,
        "card": {"number": MARKER, "exp": "12/30"},
    }


def test_a_missing_key_changes_nothing() -> None:
    data = {"user": "ada", "card": "none"}
    assert masked(["data.password", "data.card.number"], "data", dict(data)) == data


def test_a_glob_segment_matches_any_key_and_list_index() -> None:
    data = {
        "github": {"token": "gh-1", "user": "ada"},
        "slack": {"token": "sl-2"},
        "hooks": [{"token": "h-0"}, {"token": "h-1", "url": "u"}],
    }
    assert masked(["data.*.token", "data.hooks.*.token"], "data", data) == {
        "github": {"token": MARKER, "user": "ada"},
        "slack": {"token": MARKER},
        "hooks": [{"token": MARKER}, {"token": MARKER, "url": "u"}],
    }
    assert masked(["data.api_*"], "data", {"api_key": 1, "api_url": 2, "apikey": 3}) == {
        "api_key": MARKER,
        "api_url": MARKER,
        "apikey": 3,
    }
    assert masked(["data.hooks.1"], "data", {"hooks": ["a", "b"]}) == {"hooks": ["a", MARKER]}


def test_double_star_reaches_any_depth_including_none() -> None:
    data = {"secret": 1, "a": {"secret": 2, "b": [{"secret": {"deep": 3}}]}, "open": 4}
    assert masked(["data.**.secret"], "data", data) == {
        "secret": MARKER,
        "a": {"secret": MARKER, "b": [{"secret": MARKER}]},
        "open": 4,
    }


def test_a_leading_double_star_covers_every_root() -> None:
    rules = compile_paths(["**.apiKey"])
    assert rules.roots == {"data", "returnvalue", "opts", "progress"}
    job = {
        "data": {"apiKey": "d"},
        "returnvalue": {"nested": {"apiKey": "r"}},
        "opts": {"attempts": 1},
        "progress": 5,
    }
    redact_job(job, rules)
    assert job["data"] == {"apiKey": MARKER}
    assert job["returnvalue"] == {"nested": {"apiKey": MARKER}}
    assert job["opts"] == {"attempts": 1} and job["progress"] == 5
    assert job["redacted"] == ["data", "returnvalue"]


def test_a_path_that_is_only_a_root_masks_the_whole_field() -> None:
    assert masked(["returnvalue"], "returnvalue", {"apiKey": "x"}) == MARKER
    assert masked(["returnvalue.**"], "returnvalue", "plain text") == MARKER


def test_keys_match_exactly() -> None:
    data = {"Password": "a", "password": "b", "passwords": "c"}
    assert masked(["data.password"], "data", data) == {
        "Password": "a",
        "password": MARKER,
        "passwords": "c",
    }


def test_a_path_stops_at_a_scalar() -> None:
    assert masked(["data.card.number"], "data", {"card": "4111"}) == {"card": "4111"}
    assert masked(["data.password"], "data", "password") == "password"


def test_mask_counts_what_it_replaced() -> None:
    rules = compile_paths(["data.*.token"])
    value, count = mask({"a": {"token": 1}, "b": {"token": 2}, "c": 3}, rules, rules.starts["data"])
    assert count == 2 and value["c"] == 3


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("password", "must start with one of"),
        ("data..token", "empty segment"),
        ("data.", "empty segment"),
        ("data.a**", "segment of its own"),
        ("", "non-empty string"),
        ("stacktrace.0", "must start with one of"),
    ],
)
def test_paths_that_cannot_be_used_say_why(path: str, words: str) -> None:
    problem = path_problem(path)
    assert problem is not None and words in problem
    with pytest.raises(PathError, match=words):
        compile_paths([path])


def test_a_root_may_be_a_glob() -> None:
    assert path_problem("*.token") is None
    assert compile_paths(["*.token"]).roots == {"data", "returnvalue", "opts", "progress"}
    assert compile_paths(["[dr]*.token"]).roots == {"data", "returnvalue"}


def hash_with_secret(**extra: str) -> dict[str, str]:
    return {
        "name": "charge",
        "timestamp": "1700000000000",
        "data": json.dumps({"user": "ada", "password": "hunter2"}),
        "returnvalue": json.dumps({"apiKey": "sk-live-1", "ok": True}),
        **extra,
    }


def test_decoded_jobs_are_masked_when_redact_is_set() -> None:
    with override_settings(BULLPEN={"REDACT": ["data.password", "returnvalue.apiKey"]}):
        job = job_from_hash("1", hash_with_secret())
    assert job["data"] == {"user": "ada", "password": MARKER}
    assert job["returnvalue"] == {"apiKey": MARKER, "ok": True}
    assert job["redacted"] == ["data", "returnvalue"]
    assert "hunter2" not in json.dumps(job) and "sk-live-1" not in json.dumps(job)


def test_nothing_changes_when_redact_is_empty() -> None:
    with override_settings(BULLPEN={}):
        job = job_from_hash("1", hash_with_secret())
    assert json.loads(hash_with_secret()["data"]) == job["data"] and "redacted" not in job


def test_the_standalone_form_a_whitespace_separated_string_is_read_as_paths() -> None:
    with override_settings(BULLPEN={"REDACT": "data.password  returnvalue.apiKey"}):
        job = job_from_hash("1", hash_with_secret())
    assert job["redacted"] == ["data", "returnvalue"]


def test_a_field_cut_short_keeps_its_fields_before_the_first_a_path_enters() -> None:
    raw = hash_with_secret(data='{"user": "ada", "card": {"exp": "1", "number": "41')
    with override_settings(BULLPEN={"REDACT": ["data.card.number"]}):
        job = job_from_hash("1", raw, {"data": 5000})
    assert job["data"] == '{"user": "ada", ' + MARKER and job["truncated"] == {"data": 5000}
    assert job["redacted"] == ["data"]


def test_a_field_cut_inside_a_value_no_path_enters_is_kept() -> None:
    text = '{"user": "ada", "note": "long text cut he'
    with override_settings(BULLPEN={"REDACT": ["data.password"]}):
        job = job_from_hash("1", hash_with_secret(data=text), {"data": 5000})
    assert job["data"] == text and "redacted" not in job


@pytest.mark.parametrize(
    ("paths", "text"),
    [
        (["data.**.password"], '{"user": "ada", "x": 1'),
        (["data.*"], '{"user": "ada"'),
        (["data.password"], '["a list", "password'),
        (["data.password"], '{"pass'),
    ],
)
def test_cut_text_a_path_may_reach_from_its_start_is_masked_whole(
    paths: list[str], text: str
) -> None:
    with override_settings(BULLPEN={"REDACT": paths}):
        job = job_from_hash("1", hash_with_secret(data=text), {"data": 5000})
    assert job["data"] == MARKER


def envelope(data: Any) -> dict[str, Any]:
    return {
        "queue": "pay",
        "jobId": "7",
        "name": "charge",
        "failedReason": "declined",
        "stacktrace": ["Error: declined"],
        "opts": {"attempts": 3},
        "data": data,
    }


def test_a_dead_letter_envelope_has_the_original_data_masked() -> None:
    raw = hash_with_secret(data=json.dumps(envelope({"user": "ada", "password": "hunter2"})))
    with override_settings(BULLPEN={"REDACT": ["data.password", "opts.attempts"]}):
        job = job_from_hash("1", raw)
    assert job["data"]["data"] == {"user": "ada", "password": MARKER}
    assert job["data"]["opts"] == {"attempts": MARKER} and job["data"]["queue"] == "pay"
    # The job's own options are masked too (BullMQ's default "attempts": 0).
    assert job["opts"] == {"attempts": MARKER} and job["redacted"] == ["data", "opts"]


def test_a_cut_dead_letter_envelope_keeps_what_its_row_shows() -> None:
    text = json.dumps(envelope({"password": "hunter2"}))[:-30]
    with override_settings(BULLPEN={"REDACT": ["data.password"]}):
        job = job_from_hash("1", hash_with_secret(data=text), {"data": 5000})
    kept = job["data"]
    assert kept.endswith(MARKER) and "hunter2" not in kept
    assert kept.startswith('{"queue": "pay", "jobId": "7", "name": "charge"')
    assert '"failedReason": "declined"' in kept and '"data"' not in kept


def test_a_cut_field_no_path_starts_at_is_left_alone() -> None:
    raw = hash_with_secret(returnvalue='{"apiKey": "sk-')
    with override_settings(BULLPEN={"REDACT": ["data.password"]}):
        job = job_from_hash("1", raw, {"returnvalue": 5000})
    assert job["returnvalue"] == '{"apiKey": "sk-'


def test_text_that_is_not_json_stays_text() -> None:
    raw = hash_with_secret(data="password=hunter2")
    with override_settings(BULLPEN={"REDACT": ["data.password"]}):
        job = job_from_hash("1", raw)
    assert job["data"] == "password=hunter2" and job["invalid"] == ["data"]
    assert "redacted" not in job


def test_json_too_deep_to_parse_is_masked_whole() -> None:
    deep = '{"password": "hunter2", "x": ' + "[" * 300 + "]" * 300 + "}"
    with override_settings(BULLPEN={"REDACT": ["data.password"]}):
        job = job_from_hash("1", hash_with_secret(data=deep))
    assert job["data"] == MARKER and "data" in job["invalid"]


def test_a_wrong_path_fails_reads_rather_than_showing_secrets() -> None:
    with override_settings(BULLPEN={"REDACT": ["password"]}), pytest.raises(PathError):
        job_from_hash("1", hash_with_secret())
