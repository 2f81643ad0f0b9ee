"""REDIS_URL: one server, a Sentinel-watched master, a Redis Cluster; and what is refused."""

from __future__ import annotations

import pytest
from django.test import override_settings

from queues.config.problems import problems
from queues.redis.urls import (
    ClusterUrl,
    RedisUrlError,
    SentinelUrl,
    ServerUrl,
    parse_redis_url,
    redact,
)
from queues.redis.write_once import WriteOnceRedis


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0",
        "redis://localhost",
        "rediss://user:pw@cache.example.com:6380/2",
        "unix:///run/redis/redis.sock?db=1",
        "REDIS://host:6379",
    ],
)
def test_one_server_goes_to_redis_py_as_given(url: str) -> None:
    assert parse_redis_url(url) == ServerUrl(url)


def test_sentinel_url_with_everything() -> None:
    target = parse_redis_url(
        "rediss+sentinel://app:p%40ss@s1.example.com:26379,s2:26380,[::1]:26381/mymaster/3"
        "?sentinel_password=spw&ssl_ca_certs=/etc/ca.pem&ssl_cert_reqs=required"
    )
    assert target == SentinelUrl(
        sentinels=(("s1.example.com", 26379), ("s2", 26380), ("::1", 26381)),
        service="mymaster",
        db=3,
        username="app",
        password="p@ss",  # noqa: S106 - test-only
        tls=True,
        sentinel_password="spw",  # noqa: S106 - test-only
        tls_options={"ssl_ca_certs": "/etc/ca.pem", "ssl_cert_reqs": "required"},
    )
    assert isinstance(target, SentinelUrl)
    assert target.master_options() == {
        "db": 3,
        "username": "app",
        "password": "p@ss",
        "ssl": True,
        "ssl_ca_certs": "/etc/ca.pem",
        "ssl_cert_reqs": "required",
    }
    assert target.sentinel_options() == {
        "password": "spw",
        "ssl": True,
        "ssl_ca_certs": "/etc/ca.pem",
        "ssl_cert_reqs": "required",
    }


def test_sentinel_url_plain() -> None:
    target = parse_redis_url("redis+sentinel://127.0.0.1/cache")
    assert target == SentinelUrl(sentinels=(("127.0.0.1", 26379),), service="cache")
    assert isinstance(target, SentinelUrl)
    # No credentials and no TLS unless the URL says so; the database is 0.
    assert target.master_options() == {"db": 0}
    assert target.sentinel_options() == {}


def test_password_without_user() -> None:
    target = parse_redis_url("redis+sentinel://:secret@h:26379/m")
    assert isinstance(target, SentinelUrl)
    assert (target.username, target.password) == (None, "secret")


def test_cluster_url_is_parsed() -> None:
    assert parse_redis_url("rediss+cluster://u:p@n1:7000,n2:7001") == ClusterUrl(
        nodes=(("n1", 7000), ("n2", 7001)),
        scheme="rediss+cluster",
        username="u",
        password="p",  # noqa: S106 - test-only
        tls=True,
    )
    assert parse_redis_url("redis+cluster://n1/") == ClusterUrl(
        nodes=(("n1", 6379),), scheme="redis+cluster"
    )


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://cache:6379", "the scheme http:// is not one of redis://, rediss://"),
        ("cache:6379", "the scheme none"),
        ("", "non-empty string"),
        (None, "non-empty string"),
        ("redis://host:99999/0", "port"),
        ("redis://host:abc/0", "port"),
        ("redis://host:6379/zero", "database after the host must be a number"),
        ("unix://", "socket's path"),
        ("redis+sentinel://h:26379", "names no service"),
        ("redis+sentinel://h:26379/", "names no service"),
        ("redis+sentinel:///mymaster", "names no sentinel"),
        ("redis+sentinel://h:26379,/m", "empty entry"),
        ("redis+sentinel://h:0/m", "'h:0' has a port"),
        ("redis+sentinel://h:263790/m", "port that is not a number"),
        ("redis+sentinel://h:x/m", "port that is not a number"),
        ("redis+sentinel://:1/m", "has no host"),
        ("redis+sentinel://[::1/m", "not [address]:port"),
        ("redis+sentinel://h/m/x", "database after the service must be a number"),
        ("redis+sentinel://h/m/1/2", "/<service> or /<service>/<db>"),
        ("redis+sentinel://h/m?timeout=3", "option 'timeout' is not known"),
        ("redis+sentinel://h/m?ssl_ca_certs=/ca.pem", "needs TLS"),
        ("rediss+sentinel://h/m?ssl_cert_reqs=maybe", "ssl_cert_reqs must be one of"),
        ("redis+sentinel://h/m#top", "fragment"),
        ("redis+cluster://n1:7000/3", "only database 0"),
        ("redis+cluster://", "names no cluster node"),
        ("redis+cluster://n1?x=1", "option 'x' is not known"),
    ],
)
def test_what_is_refused_and_why(url: object, says: str) -> None:
    with pytest.raises(RedisUrlError, match=None) as refused:
        parse_redis_url(url)
    assert says in str(refused.value)


def test_redact_hides_passwords_only() -> None:
    assert redact("redis://u:pw@h:1/0") == "redis://u:***@h:1/0"
    assert redact("redis+sentinel://:pw@a:1,b:2/m?sentinel_password=x&ssl_cert_reqs=none") == (
        "redis+sentinel://:***@a:1,b:2/m?sentinel_password=***&ssl_cert_reqs=none"
    )
    assert redact("redis://h:1/0") == "redis://h:1/0"
    assert redact("not a url") == "not a url"


def _codes(url: object) -> list[tuple[str, str]]:
    with override_settings(BULLPEN={"REDIS_URL": url}):
        return [(p.code, p.message) for p in problems()]


def test_checks_accept_every_supported_form() -> None:
    for url in (
        "redis://h:6379/0",
        "rediss://h:6380",
        "unix:///tmp/r.sock",
        "redis+sentinel://h1:26379,h2:26379/mymaster/0",
        "rediss+sentinel://u:p@h1:26379/mymaster",
        "redis+cluster://n1:7000,n2:7001",
        "rediss+cluster://u:p@n1:7000",
    ):
        assert _codes(url) == [], url


def test_checks_say_what_is_wrong_without_the_password() -> None:
    ((code, message),) = _codes("redis+sentinel://:hunter2@h:26379")
    assert code == "E014"
    assert "names no service" in message and "hunter2" not in message
    ((code, message),) = _codes("redis://h:70000/0")
    assert code == "E014" and "port" in message


def test_a_sentinel_client_is_built_for_the_master_with_the_urls_options() -> None:
    from redis.asyncio.sentinel import SentinelManagedSSLConnection

    from queues.redis.sentinel import OwnedSentinelPool, master_client

    target = parse_redis_url(
        "rediss+sentinel://app:pw@s1:26379,s2:26380/main/2?sentinel_password=spw&ssl_cert_reqs=none"
    )
    assert isinstance(target, SentinelUrl)
    # Nothing connects until a command is sent.
    client = master_client(target, WriteOnceRedis, {"client_name": "x", "socket_timeout": 3}, 1.5)
    pool = client.connection_pool
    assert isinstance(client, WriteOnceRedis) and isinstance(pool, OwnedSentinelPool)
    assert pool.service_name == "main" and pool.is_master
    assert pool.connection_class is SentinelManagedSSLConnection
    kwargs = pool.connection_kwargs
    assert (kwargs["db"], kwargs["username"], kwargs["password"]) == (2, "app", "pw")
    assert (kwargs["client_name"], kwargs["socket_timeout"], kwargs["ssl_cert_reqs"]) == (
        "x",
        3,
        "none",
    )
    sentinels = pool.sentinel_manager.sentinels
    assert [s.connection_pool.connection_kwargs["port"] for s in sentinels] == [26379, 26380]
    asked = sentinels[0].connection_pool.connection_kwargs
    assert (asked["password"], asked["socket_timeout"], asked["retry"].get_retries()) == (
        "spw",
        1.5,
        0,
    )
