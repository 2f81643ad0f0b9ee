"""What is wrong with ``settings.BULLPEN``, said as problems with check ids;
dashboard/checks/mounting.py
turns them into Django system checks (``bullpen.E…`` errors, ``bullpen.W…`` warnings)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from queues.config.settings import ALERT_DELIVERY_KEYS, DEFAULTS
from queues.reads.redaction import path_problem
from queues.redis.urls import RedisUrlError, parse_redis_url, redact

# Keys accepted besides DEFAULTS': the short form of PREFIXES.
ALIASES = ("PREFIX",)
_POSITIVE = (
    "SCAN_COUNT",
    "LIST_FIELD_CAP",
    "DETAIL_FIELD_CAP",
    "REDIS_TIMEOUT",
    "FAILURE_GROUP_BUDGET",
    "SEARCH_BUDGET",
    "SEARCH_FIELD_CAP",
    "SEARCH_STREAM_MAX_BYTES",
)
_NOT_NEGATIVE = ("DISCOVERY_INTERVAL", "DETAIL_LOG_LINES", "METRICS_DURATION_SAMPLE")
_MAPPINGS = (
    "QUEUE_OPTIONS",
    "BASIC_AUTH_USERS",
    "BASIC_AUTH_PLAIN",
    "BASIC_AUTH_SCOPES",
    "LIVE",
    "ALERTS",
    "WORKER",
    "ACTIONS",
)
_PAGE_SIZES = ("MIN_PAGE_SIZE", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE")
# What QUEUE_OPTIONS may say about one queue.
QUEUE_OPTION_KEYS = ("display_name", "description", "read_only", "alerts")
# The websocket's bounds in LIVE: whole numbers above 0, and a number of seconds above 0.
_LIVE_COUNTS = ("max_watches", "max_sockets_per_client")
_LIVE_SECONDS = ("auth_recheck_interval",)
_LIVE_RATES = ("quiet_reads_per_second",)


@dataclass(frozen=True)
class Problem:
    """A setting that cannot work as given. ``code`` is its check id: E… errors, W… warnings."""

    code: str
    message: str
    hint: str = ""


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

    found += _redis_url(config["REDIS_URL"])
    for key in _POSITIVE:
        if not _number(config[key]) or config[key] <= 0:
            bad(key, "must be a number above 0")
    for key in _NOT_NEGATIVE:
        if not _number(config[key]) or config[key] < 0:
            bad(key, "must be a number, 0 or more")
    for key in _MAPPINGS:
        if not isinstance(config[key], Mapping):
            bad(key, "must be a dict")
    found += _thresholds(config)
    found += _live_bounds(config["LIVE"])
    if not isinstance(config["METRICS_TOKEN"], str):
        bad("METRICS_TOKEN", "must be a string (empty: metrics off)")
    if not isinstance(config["LIVE_KEY_PREFIX"], str) or not config["LIVE_KEY_PREFIX"]:
        bad("LIVE_KEY_PREFIX", "must be a non-empty string")
    if not isinstance(config["READ_ONLY"], bool):
        bad("READ_ONLY", "must be True or False")
    if not isinstance(config["LANGUAGE_SWITCHER"], bool):
        bad("LANGUAGE_SWITCHER", "must be True or False")
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


_URL_HINT = (
    "One server: redis://[user:password@]host:6379/0 (rediss:// for TLS, unix:///path.sock); "
    "Sentinel: redis+sentinel://[user:password@]host:26379[,host:26379…]/<service>[/<db>] "
    "(rediss+sentinel:// for TLS)."
)


_CONNECTIONS_HINT = (
    "CONNECTIONS = {'eu': {'URL': 'redis://eu-redis:6379/0'}, 'us': {'URL': "
    "'rediss://us-redis:6380/0'}}: names of letters, digits, '_', '.' and '-' (at most 40), "
    "each with the URL of its Redis."
)


def connection_problems(named: Any, redis_url: Any = None) -> list[Problem]:
    """What is wrong with CONNECTIONS: its shape, each name and URL, and a REDIS_URL given
    beside it that names another server (which one would the dashboard read?)."""
    from queues.redis.connections import NAME_PATTERN, url_of_entry

    if not isinstance(named, Mapping):
        message = f"BULLPEN['CONNECTIONS'] must be a dict of named connections; it is {named!r}."
        return [Problem("E021", message, _CONNECTIONS_HINT)]
    found = []
    urls = []
    for name, entry in named.items():
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            message = (
                f"BULLPEN['CONNECTIONS'] names a connection {name!r}: a name is 1 to 40 "
                "letters, digits, '_', '.' or '-', starting with a letter or digit."
            )
            found.append(Problem("E021", message, _CONNECTIONS_HINT))
            continue
        if isinstance(entry, Mapping):
            unknown = sorted(str(key) for key in entry if key != "URL")
            if unknown:
                message = (
                    f"BULLPEN['CONNECTIONS'][{name!r}] has keys Bullpen does not know: "
                    f"{', '.join(unknown)}."
                )
                found.append(Problem("E021", message, "Each connection takes 'URL'."))
        elif not isinstance(entry, str):
            message = f"BULLPEN['CONNECTIONS'][{name!r}] must be {{'URL': ...}}; it is {entry!r}."
            found.append(Problem("E021", message, _CONNECTIONS_HINT))
            continue
        url = url_of_entry(entry)
        urls.append(url)
        found += _redis_url(url, f"BULLPEN['CONNECTIONS'][{name!r}]['URL']")
    if named and redis_url is not None and redis_url not in urls:
        message = (
            f"BULLPEN has both REDIS_URL ({_shown(redis_url)}) and CONNECTIONS, whose "
            "connections do not include it: CONNECTIONS is used and REDIS_URL ignored."
        )
        hint = "Keep one: REDIS_URL for one Redis, CONNECTIONS for several."
        found.append(Problem("E021", message, hint))
    return found


def _shown(url: Any) -> str:
    return repr(redact(url)) if isinstance(url, str) else repr(url)


def _redis_url(url: Any, where: str = "BULLPEN['REDIS_URL']") -> list[Problem]:
    """Whether REDIS_URL names something Bullpen can connect to."""
    try:
        parse_redis_url(url)
    except RedisUrlError as error:
        message = f"{where} = {_shown(url)} is not usable: {error}."
        return [Problem("E014", message, _URL_HINT)]
    return []


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


def _thresholds(config: Mapping[str, Any]) -> list[Problem]:
    """Alert thresholds, for every queue and per queue: numbers, or None (off)."""
    # A non-dict ALERTS is reported with the other dict settings.
    alerts = config["ALERTS"] if isinstance(config["ALERTS"], Mapping) else None
    given: dict[str, Any] = {}
    if alerts is not None:
        rules = {k: v for k, v in alerts.items() if k not in ALERT_DELIVERY_KEYS}
        given["BULLPEN['ALERTS']"] = rules
    options = config["QUEUE_OPTIONS"]
    for queue, per_queue in options.items() if isinstance(options, Mapping) else ():
        if not isinstance(per_queue, Mapping):
            given[f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]"] = per_queue
        else:
            given[f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]['alerts']"] = per_queue.get("alerts") or {}
    found = _delivery(alerts) if alerts is not None else []
    for where, value in given.items():
        if not isinstance(value, Mapping):
            found.append(Problem("E014", f"{where} must be a dict; it is {value!r}."))
            continue
        for rule, limit in value.items():
            if limit is not None and not (_number(limit) and limit >= 0):
                found.append(
                    Problem(
                        "E014",
                        f"{where}[{rule!r}] must be a number, 0 or more, or None (off); "
                        f"it is {limit!r}.",
                    )
                )
    return found


def _delivery(alerts: Mapping[str, Any]) -> list[Problem]:
    """How alerts reach people: addresses, webhook URLs, the cooldown, the links' base."""
    found = []

    def bad(key: str, should: str) -> None:
        where = f"BULLPEN['ALERTS'][{key!r}]"
        found.append(Problem("E014", f"{where} {should}; it is {alerts[key]!r}."))

    addresses = alerts.get("EMAIL_TO", [])
    if not _list_of(addresses, _is_address):
        bad("EMAIL_TO", "must be a list of e-mail addresses")
    webhooks = alerts.get("WEBHOOKS", [])
    if not _list_of(webhooks, lambda url: _is_url(url, path=True)):
        bad("WEBHOOKS", "must be a list of http:// or https:// URLs")
    cooldown = alerts.get("COOLDOWN", 0)
    if not _number(cooldown) or cooldown < 0:
        bad("COOLDOWN", "must be a number of seconds, 0 or more")
    interval = alerts.get("INTERVAL", 1)
    if not _number(interval) or interval <= 0:
        bad("INTERVAL", "must be a number of seconds above 0")
    base = alerts.get("LINK_BASE", "")
    if not isinstance(base, str) or (base and not _is_url(base, path=False)):
        bad("LINK_BASE", "must be the site's public origin, as 'https://ops.example.com'")
    elif not base and (addresses or webhooks) and not found:
        found.append(
            Problem(
                "W019",
                "Alert notices link to the queue page by its path alone: "
                "BULLPEN['ALERTS']['LINK_BASE'] is not set.",
                "Set it to the site's public origin, as 'https://ops.example.com'.",
            )
        )
    return found


def _list_of(value: Any, each: Callable[[Any], bool]) -> bool:
    return isinstance(value, (list, tuple)) and all(each(item) for item in value)


def _is_address(value: Any) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True


def _is_url(value: Any, *, path: bool) -> bool:
    """An http(s) URL with a host; without a query or fragment unless ``path``."""
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    plain = path or not (parts.query or parts.fragment)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and plain


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
