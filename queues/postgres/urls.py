"""What a ``postgresql://`` connection URL names: a database holding BullMQ's schema.

``postgresql://[user[:password]@]host[:port]/db[?schema=bullmq&…]`` (``postgres://`` too). The
``schema`` option is BullMQ's namespace for queues (its default ``bullmq``); every other option
is libpq's and passed on as given. Pure parsing, no connections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "bullmq"
# BullMQ's own rule for a schema name: it is written into every session's search_path.
_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,62}")


class PostgresUrlError(ValueError):
    """The URL cannot be used; the message says why, without the password."""


@dataclass(frozen=True)
class PostgresUrl:
    """A PostgreSQL database and the schema BullMQ keeps its queues in."""

    conninfo: str  # the URL libpq is given: the schema option taken out
    schema: str

    @property
    def quoted_schema(self) -> str:
        return f'"{self.schema}"'


def is_postgres_url(url: object) -> bool:
    return isinstance(url, str) and url.partition("://")[0].lower() in POSTGRES_SCHEMES


def parse_postgres_url(url: object) -> PostgresUrl:
    if not is_postgres_url(url):
        raise PostgresUrlError("it is not a postgresql:// URL")
    assert isinstance(url, str)
    parts = urlsplit(url)
    if not parts.hostname and "host=" not in parts.query:
        raise PostgresUrlError("it names no host")
    if not parts.path.strip("/"):
        raise PostgresUrlError("it names no database (postgresql://host:5432/<database>)")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError:
        raise PostgresUrlError("its port is not a number from 0 to 65535") from None
    options = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in options if key == "schema"]
    schema = schemas[-1] if schemas else DEFAULT_SCHEMA
    if not _SCHEMA_NAME.fullmatch(schema):
        raise PostgresUrlError(
            f"schema {schema!r} is not a plain name (a letter or '_', then letters, digits, "
            "'_' or '$', at most 63)"
        )
    kept = urlencode([(key, value) for key, value in options if key != "schema"])
    return PostgresUrl(urlunsplit(parts._replace(query=kept)), schema)
