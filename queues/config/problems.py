"""What is wrong with ``settings.BULLPEN``, said as problems with check ids;
dashboard/checks/mounting.py
turns them into Django system checks (``bullpen.E…`` errors, ``bullpen.W…`` warnings).

The keys, prefixes, queue names and plain values are checked here; the Redis servers in
redis_problems.py, the alert settings in alert_problems.py."""

from __future__ import annotations

from collections.abc import Mapping
from difflib import get_close_matches
from typing import Any

from django.conf import settings

from queues.config.alert_problems import threshold_problems
from queues.config.problem import Problem
from queues.config.problem import is_number as _number
from queues.config.redis_problems import connection_problems, redis_url_problems
from queues.config.settings import DEFAULTS
from queues.reads.redaction import path_problem

# Keys accepted besides DEFAULTS': the short form of PREFIXES.
ALIASES = ("PREFIX",)
_POSITIVE = (
    "SCAN_COUNT",
    "LIST_FIELD_CAP",
    "DETAIL_FIELD_CAP",
    "REDIS_TIMEOUT",
    "CANCEL_WAIT",
    "FAILURE_GROUP_BUDGET",
    "SEARCH_BUDGET",
    "SEARCH_FIELD_CAP",
    "SEARCH_STREAM_MAX_BYTES",
)
_NOT_NEGATIVE = (
    "DISCOVERY_INTERVAL",
    "DETAIL_LOG_LINES",
    "METRICS_DURATION_SAMPLE",
    "FAILURE_GROUPS_WAIT",
)
_MAPPINGS = (
    "QUEUE_OPTIONS",
    "BASIC_AUTH_USERS",
    "BASIC_AUTH_PLAIN",
    "BASIC_AUTH_SCOPES",
    "LIVE",
    "ALERTS",
    "WORKER",
    "ACTIONS",
    "MCP",
)
_PAGE_SIZES = ("MIN_PAGE_SIZE", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE")
# What QUEUE_OPTIONS may say about one queue.
QUEUE_OPTION_KEYS = ("display_name", "description", "read_only", "alerts")
# The websocket's bounds in LIVE: whole numbers above 0, and a number of seconds above 0.
_LIVE_COUNTS = ("max_watches", "max_sockets_per_client")
_LIVE_SECONDS = ("auth_recheck_interval",)
_LIVE_RATES = ("quiet_reads_per_second",)


def problems() -> list[Problem]:
    """What is wrong with ``settings.BULLPEN``; an empty list when it can be used."""
    user = getattr(settings, "BULLPEN", {}) or {}
    if not isinstance(user, Mapping):
        return [Problem("E010", "BULLPEN must be a dict.", "BULLPEN = {'REDIS_URL': ..., ...}")]
    found = _unknown_keys(user)
    if "PREFIX" in user and "PREFIXES" in user:
        found.append(
            Problem("W014", "BULLPEN has both PREFIX and PREFIXES; PREFIX is ignored.", "Keep one.")
        )
    config = {**DEFAULTS, **user}
    if "PREFIX" in user and "PREFIXES" not in user:
        config["PREFIXES"] = [user["PREFIX"]]
    prefix_problems = _prefixes(config["PREFIXES"])
    found += prefix_problems
    if not prefix_problems:
        found += _queue_names(config, list(config["PREFIXES"]))
    found += _values(config)
    found += connection_problems(config["CONNECTIONS"], user.get("REDIS_URL"))
    found += _redact_paths(config["REDACT"])
    return found


def _unknown_keys(user: Mapping[str, Any]) -> list[Problem]:
    valid = sorted([*DEFAULTS, *ALIASES])
    found = []
    for key in sorted(set(user) - set(valid), key=str):
        close = get_close_matches(str(key), valid, n=1)
        guess = f" Did you mean {close[0]!r}?" if close else ""
        found.append(
            Problem(
                "W013",
                f"Unknown BULLPEN setting {key!r}; it is ignored.{guess}",
                "Valid settings: " + ", ".join(valid) + ".",
            )
        )
    return found


def _prefixes(prefixes: Any) -> list[Problem]:
    if isinstance(prefixes, str) or not isinstance(prefixes, (list, tuple)) or not prefixes:
        return [
            Problem(
                "E011",
                "BULLPEN['PREFIXES'] must be a non-empty list of key prefixes.",
                "BullMQ's default prefix is 'bull': PREFIXES = ['bull'].",
            )
        ]
    bad = [p for p in prefixes if not isinstance(p, str) or not p]
    if bad:
        return [Problem("E011", f"BULLPEN['PREFIXES'] holds invalid prefixes: {bad!r}.")]
    return []


def _queue_names(config: Mapping[str, Any], prefixes: list[str]) -> list[Problem]:
    found = []
    queues, options = config["QUEUES"], config["QUEUE_OPTIONS"]
    if isinstance(queues, str) or not isinstance(queues, (list, tuple)):
        return [Problem("E014", "BULLPEN['QUEUES'] must be a list of queue names.")]
    for name in queues:
        reason = _slug_problem(name, prefixes)
        if reason:
            found.append(Problem("E012", f"BULLPEN['QUEUES'] entry {name!r}: {reason}", _SLUG_HINT))
    for name in options if isinstance(options, Mapping) else ():
        reason = _slug_problem(name, prefixes)
        if reason:
            found.append(
                Problem("W015", f"BULLPEN['QUEUE_OPTIONS'] key {name!r}: {reason}", _SLUG_HINT)
            )
    return found


_SLUG_HINT = (
    "Name a queue under the first prefix by its name ('email') and one under another "
    "configured prefix as '<prefix>:<name>' ('other:email')."
)


def _slug_problem(slug: Any, prefixes: list[str]) -> str:
    if not isinstance(slug, str) or not slug:
        return "a queue name must be a non-empty string."
    prefix, sep, name = slug.rpartition(":")
    if not sep:
        return ""
    if not name:
        return "the queue name after the last ':' is empty."
    if prefix not in prefixes:
        # BullMQ refuses ':' in queue names, so the part before the last ':' must be a prefix.
        return f"BullMQ queue names cannot contain ':', and {prefix!r} is not one of PREFIXES."
    return ""


def _values(config: Mapping[str, Any]) -> list[Problem]:
    found = []

    def bad(key: str, should: str) -> None:
        found.append(Problem("E014", f"BULLPEN[{key!r}] {should}; it is {config[key]!r}."))

    found += redis_url_problems(config["REDIS_URL"])
    for key in _POSITIVE:
        if not _number(config[key]) or config[key] <= 0:
            bad(key, "must be a number above 0")
    for key in _NOT_NEGATIVE:
        if not _number(config[key]) or config[key] < 0:
            bad(key, "must be a number, 0 or more")
    for key in _MAPPINGS:
        if not isinstance(config[key], Mapping):
            bad(key, "must be a dict")
    found += threshold_problems(config)
    found += _live_bounds(config["LIVE"])
    found += _mcp_problems(config["MCP"])
    if not isinstance(config["METRICS_TOKEN"], str):
        bad("METRICS_TOKEN", "must be a string (empty: metrics off)")
    if not isinstance(config["LIVE_KEY_PREFIX"], str) or not config["LIVE_KEY_PREFIX"]:
        bad("LIVE_KEY_PREFIX", "must be a non-empty string")
    for flag in ("READ_ONLY", "LANGUAGE_SWITCHER", "HISTORY_RECORDING", "METRICS_PER_JOB_NAME"):
        if not isinstance(config[flag], bool):
            bad(flag, "must be True or False")
    path = config["WEBSOCKET_PATH"]
    if not isinstance(path, str) or not path.startswith("/") or not path.endswith("/"):
        bad("WEBSOCKET_PATH", "must be a path starting and ending with '/'")
    delimiter = config["GROUP_DELIMITER"]
    if not isinstance(delimiter, str) or not 1 <= len(delimiter) <= 5:
        bad("GROUP_DELIMITER", "must be text of 1 to 5 characters")
    sizes = [config[key] for key in _PAGE_SIZES]
    if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
        found.append(
            Problem(
                "E013",
                "MIN_PAGE_SIZE, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE must be whole numbers above 0.",
            )
        )
    elif not sizes[0] <= sizes[1] <= sizes[2]:
        found.append(
            Problem(
                "E013",
                f"Page sizes are inconsistent: MIN_PAGE_SIZE {sizes[0]}, DEFAULT_PAGE_SIZE "
                f"{sizes[1]}, MAX_PAGE_SIZE {sizes[2]}.",
                "They must satisfy MIN_PAGE_SIZE <= DEFAULT_PAGE_SIZE <= MAX_PAGE_SIZE.",
            )
        )
    return found


_REDACT_HINT = (
    "REDACT = ['data.password', 'data.*.token', 'returnvalue.apiKey', '**.secret']: "
    "dot-separated keys under data, returnvalue, opts or progress; globs per segment."
)


def _redact_paths(paths: Any) -> list[Problem]:
    if isinstance(paths, str) or not isinstance(paths, (list, tuple)):
        message = f"BULLPEN['REDACT'] must be a list of field paths; it is {paths!r}."
        return [Problem("E016", message, _REDACT_HINT)]
    found = []
    for path in paths:
        problem = path_problem(path)
        if problem:
            message = f"BULLPEN['REDACT'] cannot mask {path!r}: {problem}."
            found.append(Problem("E016", message, _REDACT_HINT))
    return found


def _live_bounds(live: Any) -> list[Problem]:
    """The websocket's limits in LIVE (a non-dict LIVE is reported with the other dicts)."""
    if not isinstance(live, Mapping):
        return []
    found = []
    for key in _LIVE_COUNTS:
        value = live.get(key, 1)
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            found.append(
                Problem(
                    "E014",
                    f"BULLPEN['LIVE'][{key!r}] must be a whole number above 0; it is {value!r}.",
                )
            )
    for key in _LIVE_RATES:
        value = live.get(key, 1)
        if not _number(value) or value <= 0:
            found.append(
                Problem(
                    "E014", f"BULLPEN['LIVE'][{key!r}] must be a number above 0; it is {value!r}."
                )
            )
    for key in _LIVE_SECONDS:
        value = live.get(key, 1)
        if not _number(value) or value <= 0:
            found.append(
                Problem(
                    "E014",
                    f"BULLPEN['LIVE'][{key!r}] must be a number of seconds above "
                    f"0; it is {value!r}.",
                )
            )
    return found


def _mcp_problems(raw: Any) -> list[Problem]:
    """``MCP``: "ACTIONS" True or False, "USER" a name, "SCOPES" a list of names."""
    if not isinstance(raw, Mapping):
        return []  # said above: it must be a dict
    mcp = {**DEFAULTS["MCP"], **raw}
    found = []
    unknown = sorted(set(map(str, raw)) - set(DEFAULTS["MCP"]))
    if unknown:
        found.append(Problem("E014", f"BULLPEN['MCP'] has unknown keys {unknown}."))
    if not isinstance(mcp["ACTIONS"], bool):
        found.append(Problem("E014", "BULLPEN['MCP']['ACTIONS'] must be True or False."))
    if not isinstance(mcp["USER"], str) or not mcp["USER"]:
        found.append(Problem("E014", "BULLPEN['MCP']['USER'] must be a user's name."))
    scopes = mcp["SCOPES"]
    if not isinstance(scopes, (list, tuple)) or not all(isinstance(s, str) for s in scopes):
        found.append(Problem("E014", "BULLPEN['MCP']['SCOPES'] must be a list of scope names."))
    return found
