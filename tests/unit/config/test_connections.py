"""Several Redis connections: how they are configured, how a queue's slug names its connection
and comes back, what the checks say about CONNECTIONS, and the standalone site's REDIS_URLS."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from bullpen_site.env_access import BadEnvironment
from bullpen_site.env_connections import connections as parse_redis_urls
from dashboard.auth.access import is_read_only
from dashboard.auth.queue_access import QueueAccess
from dashboard.auth.queue_access_rules import Holder
from dashboard.checks import mounting
from dashboard.pages.overview_list import group_key
from queues.config.queue_options import queue_options
from queues.errors import QueueNotFound
from queues.live.interest import Everyone
from queues.live.watching import Watching
from queues.reads.keys import QueueRef
from queues.redis import connections

TWO = {
    "CONNECTIONS": {"eu": {"URL": "redis://eu-redis:6379/0"}, "us": "rediss://us-redis:6380/1"},
    "PREFIXES": ["bull", "jobs"],
}


def test_one_connection_keeps_every_slug_as_it_was() -> None:
    with override_settings(BULLPEN={"REDIS_URL": "redis://h:6379/0", "PREFIXES": ["bull", "x"]}):
        assert connections.names() == ["default"] and not connections.several()
        assert QueueRef("bull", "mail").connection == "default"
        # An "@" in a name is the name's own with one connection: links stay what they were.
        for slug in ("mail", "x:mail", "mail@default", "a@b"):
            ref = QueueRef.from_slug(slug)
            assert ref.slug == slug and ref.connection == "default"
        assert QueueRef.from_slug("mail@default").name == "mail@default"


def test_several_connections_name_theirs_in_the_slug_and_come_back() -> None:
    with override_settings(BULLPEN=TWO):
        assert connections.names() == ["eu", "us"] and connections.default_name() == "eu"
        assert connections.url_of("us") == "rediss://us-redis:6380/1"
        cases = {
            QueueRef("bull", "mail", "eu"): "mail@eu",
            QueueRef("bull", "mail", "us"): "mail@us",
            QueueRef("jobs", "mail", "us"): "jobs:mail@us",
            # A name holding "@" and a connection's name: the last "@" is the connection's.
            QueueRef("bull", "x@us", "eu"): "x@us@eu",
            QueueRef("bull", "a.b", "us"): "a.b@us",
        }
        for ref, slug in cases.items():
            assert ref.slug == slug
            assert QueueRef.from_slug(slug) == ref
        assert QueueRef("bull", "mail", "eu") != QueueRef("bull", "mail", "us")
        # A link from before there were several names a queue of the default connection.
        assert QueueRef.from_slug("mail") == QueueRef("bull", "mail", "eu")
        assert QueueRef.from_slug("jobs:mail") == QueueRef("jobs", "mail", "eu")
        assert QueueRef.from_slug("mail@asia") == QueueRef("bull", "mail@asia", "eu")
        with pytest.raises(QueueNotFound):
            QueueRef.from_slug("nope:mail@us")
        with pytest.raises(QueueNotFound):
            connections.url_of("asia")


def test_the_overview_groups_by_connection() -> None:
    queue = {"name": "t1-mail", "prefix": "bull", "connection": "us"}
    assert group_key(queue, "connection", "-") == "us"
    assert group_key(queue, "head", "-") == "t1"


def test_a_connection_reader_serves_only_the_watches_of_its_queues() -> None:
    with override_settings(BULLPEN=TWO):
        everyone = Everyone(
            queues={"mail@eu", "mail@us", "mail"},
            jobs={("mail@eu", "1"), ("mail@us", "2")},
            overview=True,
            shown={"sms@us"},
            nodes=set(),
        )
        eu, us = Watching("eu"), Watching("us")
        eu.everywhere(everyone)
        us.everywhere(everyone)
        assert eu.queues == {"mail@eu", "mail"} and eu.jobs == {("mail@eu", "1")}
        assert us.queues == {"mail@us"} and us.shown == {"sms@us"}
        assert eu.overview and us.overview


def test_access_rules_match_the_queue_and_its_connection_apart() -> None:
    rules = [
        {"QUEUES": "mail", "CONNECTION": "eu", "VIEW": ["*"], "OPERATE": ["*"]},
        {"QUEUES": "*", "VIEW": ["*"]},
    ]
    with override_settings(BULLPEN={**TWO, "QUEUE_ACCESS": rules}):
        access = QueueAccess(Holder(username="alice", authenticated=True))
        assert access.level("mail@eu") == "operate"
        assert access.level("mail@us") == "view"


def _problems(bullpen: dict[str, object]) -> list[str]:
    with override_settings(BULLPEN=bullpen):
        return [f"{m.id} {m.msg}" for m in mounting.check_settings()]


def test_checks_say_what_is_wrong_with_connections() -> None:
    assert _problems(TWO) == []
    bad_name = _problems({"CONNECTIONS": {"eu west": {"URL": "redis://a"}}})
    assert any("bullpen.E021" in p and "'eu west'" in p for p in bad_name)
    at_sign = _problems({"CONNECTIONS": {"eu@1": {"URL": "redis://a"}}})
    assert any("bullpen.E021" in p and "'eu@1'" in p for p in at_sign)
    bad_url = _problems({"CONNECTIONS": {"eu": {"URL": "http://eu-redis"}}})
    assert any("CONNECTIONS']['eu']['URL']" in p and "http" in p for p in bad_url)
    unknown_key = _problems({"CONNECTIONS": {"eu": {"URL": "redis://a", "HOST": "b"}}})
    assert any("bullpen.E021" in p and "HOST" in p for p in unknown_key)
    not_a_dict = _problems({"CONNECTIONS": ["redis://a"]})
    assert any("bullpen.E021" in p and "must be a dict" in p for p in not_a_dict)
    both = _problems({"REDIS_URL": "redis://other", "CONNECTIONS": {"eu": "redis://a"}})
    assert any("bullpen.E021" in p and "both REDIS_URL" in p for p in both)
    # REDIS_URL naming one of the connections is no conflict.
    assert _problems({"REDIS_URL": "redis://a", "CONNECTIONS": {"eu": "redis://a"}}) == []


def test_redis_urls_names_several_connections() -> None:
    assert parse_redis_urls("") == {}
    assert parse_redis_urls(" eu=redis://a:6379/0\n us=rediss://u:p@b:6380/1 ") == {
        "eu": {"URL": "redis://a:6379/0"},
        "us": {"URL": "rediss://u:p@b:6380/1"},
    }
    with pytest.raises(BadEnvironment, match="REDIS_URLS"):
        parse_redis_urls("redis://a:6379/0")
    with pytest.raises(BadEnvironment, match="named twice"):
        parse_redis_urls("eu=redis://a eu=redis://b")
    # A pair that does not parse is shown without what comes before an "@" (a password).
    with pytest.raises(BadEnvironment) as raised:
        parse_redis_urls("eu:redis://user:secret@a")
    assert "secret" not in str(raised.value)


def test_the_worker_runner_refuses_a_connection_not_configured() -> None:
    with override_settings(BULLPEN=TWO), pytest.raises(CommandError, match=r"'asia'.*eu, us"):
        call_command("runqueueworker", connection="asia")


def test_queue_options_by_name_hold_on_every_connection() -> None:
    options = {"mail": {"read_only": True}, "sms@us": {"display_name": "SMS"}}
    with override_settings(BULLPEN={**TWO, "QUEUE_OPTIONS": options}):
        assert is_read_only("mail@eu") and is_read_only("mail@us")
        assert queue_options("sms@us") == {"display_name": "SMS"}
        assert queue_options("sms@eu") == {} and not is_read_only("sms@us")
    with override_settings(BULLPEN={"QUEUE_OPTIONS": {"mail": {"read_only": True}}}):
        assert is_read_only("mail") and not is_read_only("mail@default")
