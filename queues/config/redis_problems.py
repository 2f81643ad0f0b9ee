"""What is wrong with the stores ``settings.BULLPEN`` names: ``REDIS_URL`` and ``CONNECTIONS``
(Redis servers, or PostgreSQL databases holding BullMQ 6's schema)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from queues.config.problem import Problem
from queues.postgres.urls import PostgresUrlError, is_postgres_url, parse_postgres_url
from queues.redis.urls import RedisUrlError, parse_redis_url, redact

_URL_HINT = (
    "One server: redis://[user:password@]host:6379/0 (rediss:// for TLS, unix:///path.sock); "
    "Sentinel: redis+sentinel://[user:password@]host:26379[,host:26379…]/<service>[/<db>] "
    "(rediss+sentinel:// for TLS); BullMQ 6 on PostgreSQL: "
    "postgresql://[user:password@]host:5432/<database>[?schema=bullmq]."
)
# What a deployment of PostgreSQL stores alone runs without: Bullpen keeps their state in Redis
# only. Pause reasons live in the Django database and each server process reads its stores'
# live updates for its own pages, so the rest works.
OFF_WITHOUT_REDIS = (
    "alerts (shown, silenced, sent), history, failure groups, bulk actions with progress "
    "and the actions a PostgreSQL store refuses"
)
_STATE_HINT = (
    "To have them, add a Redis connection beside the PostgreSQL one, e.g. CONNECTIONS = "
    "{'state': {'URL': 'redis://127.0.0.1:6379/0'}, 'pg': {'URL': 'postgresql://…'}}: Bullpen "
    "keeps its live lease, alerts, bulk actions and history there."
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

    if not named and is_postgres_url(redis_url):
        return [_without_redis("BULLPEN['REDIS_URL'] names a PostgreSQL store and no other")]
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
        found += redis_url_problems(url, f"BULLPEN['CONNECTIONS'][{name!r}]['URL']")
    if urls and all(is_postgres_url(url) for url in urls):
        found.append(_without_redis("BULLPEN['CONNECTIONS'] names only PostgreSQL stores"))
    if named and redis_url is not None and redis_url not in urls:
        message = (
            f"BULLPEN has both REDIS_URL ({_shown(redis_url)}) and CONNECTIONS, whose "
            "connections do not include it: CONNECTIONS is used and REDIS_URL ignored."
        )
        hint = "Keep one: REDIS_URL for one Redis, CONNECTIONS for several."
        found.append(Problem("E021", message, hint))
    return found


def _without_redis(configured: str) -> Problem:
    """Not an error: a deployment of stores alone works, with what needs Redis off."""
    message = f"{configured}: without a Redis connection these are off: {OFF_WITHOUT_REDIS}."
    return Problem("W022", message, _STATE_HINT)


def _shown(url: Any) -> str:
    return repr(redact(url)) if isinstance(url, str) else repr(url)


def redis_url_problems(url: Any, where: str = "BULLPEN['REDIS_URL']") -> list[Problem]:
    """Whether REDIS_URL names something Bullpen can connect to: a Redis, or a PostgreSQL
    database holding BullMQ's queues."""
    try:
        if is_postgres_url(url):
            parse_postgres_url(url)
        else:
            parse_redis_url(url)
    except (RedisUrlError, PostgresUrlError) as error:
        message = f"{where} = {_shown(url)} is not usable: {error}."
        return [Problem("E014", message, _URL_HINT)]
    return []
