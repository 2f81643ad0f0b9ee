"""What ``REDIS_URL`` names: one Redis server, a Sentinel-watched master, or a Redis Cluster.

Pure parsing, no connections. One server keeps redis-py's own URL forms (``redis://``,
``rediss://``, ``unix://``) and is handed to ``from_url`` as given. The others list several
nodes, which redis-py's URL parser does not accept, so they are read here:

- ``redis+sentinel://[user:password@]host:port[,host:port…]/<service>[/<db>]`` — the sentinels
  to ask, and the name they monitor the master under; the credentials are the master's.
  ``rediss+sentinel://`` speaks TLS to the sentinels and to the master.
- ``redis+cluster://[user:password@]host:port[,host:port…]`` (``rediss+cluster://``) — seed
  nodes of a Redis Cluster.

Query options of the multi-node forms: ``sentinel_username`` and ``sentinel_password`` (when the
sentinels have credentials of their own), and for TLS ``ssl_ca_certs``, ``ssl_certfile``,
``ssl_keyfile`` and ``ssl_cert_reqs`` (``required``, ``optional`` or ``none``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

SERVER_SCHEMES = ("redis", "rediss", "unix")
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
ALL_SCHEMES = (*SERVER_SCHEMES, *SENTINEL_SCHEMES, *CLUSTER_SCHEMES)

DEFAULT_SENTINEL_PORT = 26379
DEFAULT_REDIS_PORT = 6379
_SENTINEL_OPTIONS = ("sentinel_username", "sentinel_password")
_TLS_OPTIONS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs")
_CERT_REQS = ("required", "optional", "none")
# Query options that carry a password (libpq's ``password`` in a postgresql:// URL).
_SECRET_OPTIONS = ("sentinel_password", "password")


class RedisUrlError(ValueError):
    """``REDIS_URL`` cannot be used; the message says why, without the password."""


@dataclass(frozen=True)
class ServerUrl:
    """One Redis server, reached the way redis-py's ``from_url`` reads the URL."""

    url: str


@dataclass(frozen=True)
class SentinelUrl:
    """A master found through Redis Sentinel."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    tls_options: dict[str, str] = field(default_factory=dict)

    def master_options(self) -> dict[str, object]:
        """redis-py connection options for the master's connections."""
        options: dict[str, object] = {"db": self.db}
        if self.username is not None:
            options["username"] = self.username
        if self.password is not None:
            options["password"] = self.password
        if self.tls:
            options["ssl"] = True
            options.update(self.tls_options)
        return options

    def sentinel_options(self) -> dict[str, object]:
        """redis-py connection options for the connections to the sentinels."""
        options: dict[str, object] = {}
        if self.sentinel_username is not None:
            options["username"] = self.sentinel_username
        if self.sentinel_password is not None:
            options["password"] = self.sentinel_password
        if self.tls:
            options["ssl"] = True
            options.update(self.tls_options)
        return options


@dataclass(frozen=True)
class ClusterUrl:
    """Seed nodes of a Redis Cluster."""

    nodes: tuple[tuple[str, int], ...]
    scheme: str
    username: str | None = None
    password: str | None = None
    tls: bool = False


RedisTarget = ServerUrl | SentinelUrl | ClusterUrl


def parse_redis_url(url: object) -> RedisTarget:
    """What ``url`` names; :class:`RedisUrlError` when it names nothing usable."""
    if not isinstance(url, str) or not url.strip():
        raise RedisUrlError("it must be a non-empty string")
    scheme, sep, after_scheme = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ALL_SCHEMES:
        shown = f"{scheme}://" if sep else "none"
        raise RedisUrlError(
            f"the scheme {shown} is not one of " + ", ".join(f"{s}://" for s in ALL_SCHEMES)
        )
    if scheme in SERVER_SCHEMES:
        return _server(url, scheme)
    # Split by hand: urlsplit refuses some host lists ("Invalid IPv6 URL") and has no port for them.
    rest, hash_sign, _fragment = after_scheme.partition("#")
    if hash_sign:
        raise RedisUrlError("it must not have a #fragment")
    rest, _, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    username, password, hosts = _userinfo(netloc)
    options = _query(query, scheme)
    tls = scheme.startswith("rediss")
    if scheme in SENTINEL_SCHEMES:
        service, db = _service_and_db(slash + path)
        return SentinelUrl(
            sentinels=_nodes(hosts, DEFAULT_SENTINEL_PORT, "sentinel"),
            service=service,
            db=db,
            username=username,
            password=password,
            tls=tls,
            sentinel_username=options.pop("sentinel_username", None),
            sentinel_password=options.pop("sentinel_password", None),
            tls_options=options,
        )
    if path.strip("/") not in ("", "0"):
        raise RedisUrlError("a Redis Cluster has only database 0; leave the path empty")
    return ClusterUrl(
        nodes=_nodes(hosts, DEFAULT_REDIS_PORT, "cluster node"),
        scheme=scheme,
        username=username,
        password=password,
        tls=tls,
    )


def redact(url: str) -> str:
    """The URL without its password (nor a ``sentinel_password`` or ``password`` option), fit
    for a message."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:***@{hosts}"
    path, question, query = tail.partition("?")
    if question:
        pairs = [p.partition("=") for p in query.split("&")]
        query = "&".join(
            f"{k}{eq}***" if k in _SECRET_OPTIONS and eq else f"{k}{eq}{v}" for k, eq, v in pairs
        )
    return f"{scheme}{sep}{netloc}{slash}{path}{question}{query}"


def _server(url: str, scheme: str) -> ServerUrl:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise RedisUrlError(f"its port is not a number from 1 to 65535 ({error})") from None
    if scheme == "unix":
        if not parts.path:
            raise RedisUrlError("a unix:// URL needs the socket's path, as unix:///run/redis.sock")
        return ServerUrl(url)
    if port == 0:
        raise RedisUrlError("its port is not a number from 1 to 65535")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise RedisUrlError(f"the database after the host must be a number; it is {db!r}")
    return ServerUrl(url)


def _userinfo(netloc: str) -> tuple[str | None, str | None, str]:
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        return None, None, hosts
    user, colon, password = userinfo.partition(":")
    return (unquote(user) or None), (unquote(password) if colon else None), hosts


def _nodes(hosts: str, default_port: int, what: str) -> tuple[tuple[str, int], ...]:
    if not hosts:
        raise RedisUrlError(f"it names no {what}; list them as host:port,host:port")
    nodes = []
    for each in hosts.split(","):
        if not each:
            raise RedisUrlError(f"its list of {what}s has an empty entry")
        nodes.append(_host_port(each, default_port, what))
    return tuple(nodes)


def _host_port(text: str, default_port: int, what: str) -> tuple[str, int]:
    if text.startswith("["):  # [IPv6 address]:port
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise RedisUrlError(f"the {what} {text!r} is not [address]:port")
        port_text = rest[1:]
    else:
        host, _, port_text = text.partition(":")
    if not host:
        raise RedisUrlError(f"the {what} {text!r} has no host")
    if not port_text:
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise RedisUrlError(f"the {what} {text!r} has a port that is not a number from 1 to 65535")
    return host, int(port_text)


def _service_and_db(path: str) -> tuple[str, int]:
    pieces = path.strip("/").split("/") if path.strip("/") else []
    if not pieces:
        raise RedisUrlError(
            "it names no service: the master's name as the sentinels know it comes after "
            "the hosts, as redis+sentinel://host:26379/mymaster"
        )
    if len(pieces) > 2:
        raise RedisUrlError("its path must be /<service> or /<service>/<db>")
    service = unquote(pieces[0])
    if not service:
        raise RedisUrlError("its service name is empty")
    if len(pieces) == 1:
        return service, 0
    if not pieces[1].isdigit():
        raise RedisUrlError(f"the database after the service must be a number; it is {pieces[1]!r}")
    return service, int(pieces[1])


def _query(query: str, scheme: str) -> dict[str, str]:
    allowed = (*_SENTINEL_OPTIONS, *_TLS_OPTIONS) if scheme in SENTINEL_SCHEMES else ()
    options: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name not in allowed:
            known = ", ".join(allowed) if allowed else "none"
            raise RedisUrlError(f"the option {name!r} is not known here (known: {known})")
        if name in _TLS_OPTIONS and not scheme.startswith("rediss"):
            raise RedisUrlError(f"the option {name!r} needs TLS: use rediss+sentinel://")
        if name == "ssl_cert_reqs" and value not in _CERT_REQS:
            raise RedisUrlError("ssl_cert_reqs must be one of " + ", ".join(_CERT_REQS))
        options[name] = value
    return options
