"""QUEUE_ACCESS as pure logic: rules, who holds what, what a message or a flow keeps."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from bullpen_site import env_access
from dashboard.auth import access, queue_access
from dashboard.auth.principal import ANONYMOUS, Principal
from dashboard.auth.queue_access_rules import Holder, level_of, parse_rules, rule_problems
from dashboard.checks import access_settings
from dashboard.live.render import seen_by as message_seen_by
from dashboard.pages.flow_views import seen_by as flow_seen_by
from queues.live import protocol

RULES: list[dict[str, Any]] = [
    {
        "QUEUES": "t0042-*",
        "VIEW": ["group:tenant42", "perm:billing.view_invoice", "user:alice"],
        "OPERATE": ["group:tenant42-ops"],
    },
    {"QUEUES": ["mail", "sms"], "CONNECTION": "other", "VIEW": ["*"]},
    {"QUEUES": ["mail", "sms"], "VIEW": ["scope:comms"], "OPERATE": ["scope:comms-ops"]},
    {"QUEUES": "*", "VIEW": ["*"], "OPERATE": ["group:ops"]},
]


def holder(**given: Any) -> Holder:
    return Holder(username=given.pop("username", "someone"), authenticated=True, **given)


def levels(rules: Any, who: Holder, *queues: str) -> list[str]:
    parsed = parse_rules(rules)
    assert parsed is not None
    return [level_of(parsed, who, queue) for queue in queues]


def test_the_first_matching_rule_decides_and_operating_implies_viewing() -> None:
    tenant = holder(groups=frozenset({"tenant42"}))
    assert levels(RULES, tenant, "t0042-mail", "t0043-mail", "mail") == ["view", "view", "hidden"]
    ops = holder(groups=frozenset({"tenant42-ops", "ops"}))
    assert levels(RULES, ops, "t0042-mail", "orders", "mail") == ["operate", "operate", "hidden"]
    # In neither list of the rule that matches: hidden, though a later rule would let anyone in.
    assert levels(RULES, holder(), "t0042-mail", "orders") == ["hidden", "view"]


def test_every_kind_of_principal() -> None:
    assert levels(RULES, holder(username="alice"), "t0042-x") == ["view"]
    assert levels(RULES, holder(perms=frozenset({"billing.view_invoice"})), "t0042-x") == ["view"]
    assert levels(RULES, holder(superuser=True), "t0042-x") == ["view"]  # holds every perm
    assert levels(RULES, holder(scopes=frozenset({"comms"})), "mail", "sms") == ["view", "view"]
    assert levels(RULES, holder(scopes=frozenset({"comms-ops"})), "sms") == ["operate"]
    # A name alone is not a user: "user:" needs someone signed in under that name.
    stranger = Holder(username="alice", authenticated=False)
    assert levels(RULES, stranger, "t0042-x") == ["hidden"]


def test_no_rule_matching_hides_the_queue_and_connections_are_matched() -> None:
    only = [{"QUEUES": "billing-*", "VIEW": ["*"]}]
    assert levels(only, holder(), "billing-eu", "orders") == ["view", "hidden"]
    parsed = parse_rules(RULES)
    assert parsed is not None
    assert level_of(parsed, holder(), "mail", "other") == "view"
    assert level_of(parsed, holder(), "mail", "default") == "hidden"
    # Case matters, as in queue names.
    assert levels(only, holder(), "Billing-eu") == ["hidden"]


def test_unusable_rules_are_named() -> None:
    assert rule_problems(None) == [] and parse_rules(None) is None
    assert rule_problems(RULES) == []
    assert rule_problems({"QUEUES": "*"}) == [
        "must be a list of rules (dicts), the first matching a queue deciding"
    ]
    found = rule_problems(
        [
            "x",
            {"QUEUES": "", "VIEW": "group:a"},
            {"QUEUES": ["a"], "CONNECTION": [], "VIEW": ["team:a", "perm:nodot", 3], "WHO": 1},
        ]
    )
    assert found == [
        "rule 0 is not a dict",
        "rule 1: QUEUES must be a glob or a non-empty list of globs",
        "rule 1: VIEW must be a list of principals",
        "rule 2 has unknown keys ['WHO']; a rule takes ['QUEUES', 'CONNECTION', 'VIEW', 'OPERATE']",
        "rule 2: CONNECTION must be a glob or a non-empty list of globs",
        "rule 2: VIEW: 'team:a' is not '*' nor one of group:, perm:, user:, scope: and a name",
        "rule 2: VIEW: 'perm:nodot': a permission is '<app_label>.<codename>'",
        "rule 2: VIEW: 3 is not text",
    ]
    with pytest.raises(ValueError, match="rule 0 is not a dict"):
        parse_rules(["x"])


def test_the_access_of_a_principal_follows_the_settings(bullpen_settings: dict[str, Any]) -> None:
    assert not queue_access.restricted()
    assert queue_access.holder_of(ANONYMOUS).authenticated is False
    rules = [{"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["user:boss"]}]
    config = {**bullpen_settings, "QUEUE_ACCESS": rules, "BASIC_AUTH_SCOPES": {"amy": ["t1"]}}
    with override_settings(BULLPEN=config):
        assert queue_access.restricted()
        amy = queue_access.QueueAccess(queue_access.holder_of(Principal("amy", "basic")))
        assert amy.visible(["t1-a", "t2-a", "t1-b"]) == ["t1-a", "t1-b"]
        assert amy.may_view("t1-a") and not amy.may_operate("t1-a")
        boss = queue_access.QueueAccess(queue_access.holder_of(Principal("boss", "basic")))
        assert boss.may_act_on("t1-a") and boss.audience != amy.audience
        # Scopes belong to basic-auth users only.
        session = queue_access.holder_of(Principal("amy", "session", user=None))
        assert session.scopes == frozenset()
    with override_settings(BULLPEN={**config, "READ_ONLY": True}):
        assert not boss.may_act_on("t1-a")
    # Where no rule names a user, those who hold the same scopes share one audience.
    by_scope = [{"QUEUES": "t1-*", "VIEW": ["scope:t1"]}]
    scopes = {"amy": ["t1"], "ann": ["t1"], "zed": ["t2"]}
    with override_settings(
        BULLPEN={**config, "QUEUE_ACCESS": by_scope, "BASIC_AUTH_SCOPES": scopes}
    ):
        amy, ann, zed = (
            queue_access.QueueAccess(queue_access.holder_of(Principal(name, "basic")))
            for name in ("amy", "ann", "zed")
        )
        assert amy.audience == ann.audience != zed.audience
    assert queue_access.EVERYTHING.visible(["t2-a"]) == ["t2-a"]
    assert queue_access.EVERYTHING.may_act_on("t2-a")


def test_a_live_message_keeps_what_its_audience_may_view(bullpen_settings: dict[str, Any]) -> None:
    counts = protocol.overview_counts_message(
        [{"slug": "t1-a", "counts": {"waiting": 1}}, {"slug": "t2-a", "counts": {"failed": 2}}]
    )
    rows = protocol.rows_message("t2-a", [], [])
    batch = protocol.batch_message([counts, rows])
    assert message_seen_by(batch, queue_access.EVERYTHING) is batch
    rules = [{"QUEUES": "t1-*", "VIEW": ["*"]}]
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_ACCESS": rules}):
        tenant = queue_access.QueueAccess(queue_access.holder_of(Principal("x", "basic")))
        seen = message_seen_by(batch, tenant)
        assert seen == {
            "type": "batch",
            "messages": [{**counts, "queues": [{"slug": "t1-a", "counts": {"waiting": 1}}]}],
        }
        assert message_seen_by(rows, tenant) is None
        assert message_seen_by(protocol.status_message(True), tenant) is not None


def test_a_flow_node_in_a_hidden_queue_keeps_only_its_place(
    bullpen_settings: dict[str, Any],
) -> None:
    leaf = {"queue": "t1-a", "id": "3", "name": "leaf", "children": []}
    middle = {"queue": "t2-a", "id": "2", "name": "secret", "failedReason": "x", "children": [leaf]}
    flow = {"root": {"queue": "t1-a", "id": "1", "children": [middle]}, "job": {}}
    assert flow_seen_by(queue_access.EVERYTHING, flow) is flow
    rules = [{"QUEUES": "t1-*", "VIEW": ["*"]}]
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_ACCESS": rules}):
        tenant = queue_access.QueueAccess(queue_access.holder_of(Principal("x", "basic")))
        seen = flow_seen_by(tenant, flow)
    assert seen["root"]["children"] == [{"hidden": True, "children": [leaf]}]
    assert "secret" not in repr(seen)


def test_the_standalone_sites_environment_text() -> None:
    assert env_access.users("alice:pw-1 bob:p:w") == {"alice": "pw-1", "bob": "p:w"}
    assert env_access.scopes("alice=t42,billing bob=ops alice=x") == {
        "alice": ["t42", "billing", "x"],
        "bob": ["ops"],
    }
    assert env_access.rules("  ") is None
    assert env_access.rules('[{"QUEUES": "*", "VIEW": ["*"]}]') == [{"QUEUES": "*", "VIEW": ["*"]}]
    for bad in (lambda: env_access.users("alice"), lambda: env_access.scopes("bob=")):
        with pytest.raises(env_access.BadEnvironment):
            bad()
    with pytest.raises(env_access.BadEnvironment, match="QUEUE_ACCESS is not JSON"):
        env_access.rules("[{")


def test_rules_that_cannot_be_used_fail_the_system_check_and_close_the_fast_path(
    bullpen_settings: dict[str, Any],
) -> None:
    assert access.reads_are_open()  # the tests' settings: anyone reads, every queue
    bad = {**bullpen_settings, "QUEUE_ACCESS": [{"QUEUES": "*", "VIEW": ["team:a"]}]}
    with override_settings(BULLPEN=bad):
        found = [m for m in access_settings.check_access() if m.id == "bullpen.E017"]
        assert len(found) == 1 and "'team:a'" in found[0].msg
    good = {**bullpen_settings, "QUEUE_ACCESS": RULES}
    with override_settings(BULLPEN=good):
        assert not [m for m in access_settings.check_access() if m.id == "bullpen.E017"]
        # Who asks decides what they see: no answer without looking at them.
        assert not access.reads_are_open()
