"""The stores the dashboard reads, each under a name: Redis servers, and PostgreSQL databases
holding BullMQ 6's Postgres schema (``postgresql://`` URLs, queues/postgres/).

``BULLPEN["CONNECTIONS"] = {"eu": {"URL": "redis://…"}, "us": {"URL": "…"}}`` names several;
``BULLPEN["REDIS_URL"]`` alone is the short form of one, named ``default``. The first entry is
the default connection: the worker runner's, and the one a queue slug without a connection
(a link made while there was only one) names. Bullpen's own state (live lease, alerts, bulk
actions, history) lives on the first Redis connection, the state connection; with none (only
PostgreSQL stores) what works there keeps its state in the Django database
(queues/postgres/without_redis.py).

With several connections a queue's slug carries its connection after an ``@`` (``mail@eu``,
``jobs:mail@us``): connection names hold no ``@``, so the last one separates it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from queues.config.settings import get_config, on_change
from queues.errors import QueueNotFound
from queues.postgres.urls import is_postgres_url
from queues.redis.urls import ClusterUrl, RedisUrlError, parse_redis_url

DEFAULT_NAME = "default"
# Names appear in URLs, metric labels and key-free log lines: letters, digits, ``_ . -``.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
SLUG_SEPARATOR = "@"


@dataclass(frozen=True)
class Connection:
    """One configured store: its name and the URL that reaches it."""

    name: str
    url: str

    @property
    def is_postgres(self) -> bool:
        return is_postgres_url(self.url)


@cache
def configured() -> tuple[Connection, ...]:
    """Every configured connection, the default one first."""
    config = get_config()
    named = config.get("CONNECTIONS") or {}
    if not isinstance(named, Mapping) or not named:
        return (Connection(DEFAULT_NAME, str(config["REDIS_URL"])),)
    return tuple(Connection(str(name), url_of_entry(entry)) for name, entry in named.items())


def url_of_entry(entry: Any) -> str:
    """The URL of one CONNECTIONS entry (``{"URL": …}``, or the URL alone)."""
    if isinstance(entry, Mapping):
        return str(entry.get("URL", ""))
    return str(entry)


@on_change
def reset() -> None:
    configured.cache_clear()
    postgres_set.cache_clear()


def names() -> list[str]:
    return [connection.name for connection in configured()]


def default_name() -> str:
    return configured()[0].name


def redis_names() -> list[str]:
    """The Redis connections: what reads keys, streams and scripts may be sent to."""
    return [connection.name for connection in configured() if not connection.is_postgres]


def postgres_names() -> list[str]:
    return [connection.name for connection in configured() if connection.is_postgres]


@cache  # asked for every queue a read over thousands touches
def postgres_set() -> frozenset[str]:
    return frozenset(postgres_names())


def is_postgres(name: str) -> bool:
    return name in postgres_set()


def state_on_redis() -> bool:
    """Some connection is a Redis: Bullpen's own state lives there. Without one, the features
    that keep state only in Redis are off (queues/postgres/without_redis.py)."""
    return bool(redis_names())


def state_name() -> str:
    """The connection holding Bullpen's own state: the first Redis one (with none, the first
    connection, which callers reach only where :func:`state_on_redis`)."""
    found = redis_names()
    return found[0] if found else default_name()


def several() -> bool:
    """More than one connection: slugs, rows and metrics then name theirs."""
    return len(configured()) > 1


def url_of(name: str | None) -> str:
    """The URL of connection ``name`` (None: the state connection, Bullpen's own Redis)."""
    if name is None:
        name = state_name()
    for connection in configured():
        if connection.name == name:
            return connection.url
    raise QueueNotFound(f"No connection named {name!r}")


def split_slug(slug: str) -> tuple[str, str]:
    """``(connection, slug without it)`` of a URL's queue segment. A segment without a
    configured connection after its last ``@`` (a link from before there were several) names
    a queue of the default connection; with one connection every slug is as it always was."""
    head, sep, tail = slug.rpartition(SLUG_SEPARATOR)
    if several() and sep and head and tail in names():
        return tail, head
    return default_name(), slug


def own_key_prefix(connection: str | None = None) -> str:
    """The prefix of Bullpen's own keys (``LIVE_KEY_PREFIX``) on ``connection`` (None: the
    state connection). On a Redis Cluster it is made a hash tag (``{bullpen}``) unless it holds
    one: the keys that one transaction or script of Bullpen's touches must share a slot."""
    config = get_config()
    prefix = str(config.get("LIVE_KEY_PREFIX") or "bullpen")
    if "{" in prefix or not _names_a_cluster(url_of(connection)):
        return prefix
    return "{" + prefix + "}"


@cache  # by URL alone: asked for every key a pass over thousands of queues builds
def _names_a_cluster(url: str) -> bool:
    try:
        return isinstance(parse_redis_url(url), ClusterUrl)
    except RedisUrlError:
        return False  # the system check reports it
