"""``BULLPEN["QUEUE_ACCESS"]``: which queues each principal may view and operate. Pure logic.

The setting is a list of rules; the first rule whose ``QUEUES`` glob (or list of globs) matches
the queue's URL name, on a connection its ``CONNECTION`` glob matches, decides::

    [
        {"QUEUES": "t0042-*", "VIEW": ["group:tenant42", "user:alice"],
         "OPERATE": ["group:tenant42-ops"]},
        {"QUEUES": "*", "VIEW": ["*"], "OPERATE": ["group:ops"]},
    ]

Principals: ``group:<Django group>``, ``perm:<app_label.codename>`` (a superuser holds every
permission), ``user:<name>`` (a Django username or a basic-auth user), ``scope:<name>`` (a scope
``BASIC_AUTH_SCOPES`` gives a basic-auth user), ``*`` (anyone who may read the dashboard).
Operating implies viewing. A queue no rule matches is hidden.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

Level = Literal["hidden", "view", "operate"]
# The name of the one connection BULLPEN["REDIS_URL"] configures (queues/redis/connections.py).
DEFAULT_CONNECTION = "default"
RULE_KEYS = ("QUEUES", "CONNECTION", "VIEW", "OPERATE")
PRINCIPAL_KINDS = ("group", "perm", "user", "scope")


@dataclass(frozen=True)
class Rule:
    queues: tuple[str, ...]
    connections: tuple[str, ...]
    view: frozenset[str]
    operate: frozenset[str]

    def covers(self, connection: str, queue: str) -> bool:
        return any(fnmatchcase(connection, glob) for glob in self.connections) and any(
            fnmatchcase(queue, glob) for glob in self.queues
        )


@dataclass(frozen=True)
class Holder:
    """What one principal holds that rules can name."""

    username: str
    authenticated: bool
    groups: frozenset[str] = frozenset()
    perms: frozenset[str] = frozenset()
    superuser: bool = False
    scopes: frozenset[str] = frozenset()

    def holds(self, principal: str) -> bool:
        if principal == "*":
            return True
        kind, _, name = principal.partition(":")
        if kind == "user":
            return self.authenticated and name == self.username
        if kind == "group":
            return name in self.groups
        if kind == "perm":
            return self.superuser or name in self.perms
        if kind == "scope":
            return name in self.scopes
        return False


def level_of(
    rules: Sequence[Rule], holder: Holder, queue: str, connection: str = DEFAULT_CONNECTION
) -> Level:
    """What ``holder`` may do with ``queue`` (its URL name): the first rule covering it says."""
    for rule in rules:
        if rule.covers(connection, queue):
            if any(holder.holds(p) for p in rule.operate):
                return "operate"
            if any(holder.holds(p) for p in rule.view):
                return "view"
            return "hidden"
    return "hidden"


def _globs(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,) if value else None
    if isinstance(value, (list, tuple)) and value and all(isinstance(g, str) and g for g in value):
        return tuple(value)
    return None


def _principal_problem(value: Any) -> str:
    if not isinstance(value, str):
        return f"{value!r} is not text"
    if value == "*":
        return ""
    kind, sep, name = value.partition(":")
    if not sep or kind not in PRINCIPAL_KINDS or not name:
        return f"{value!r} is not '*' nor one of group:, perm:, user:, scope: and a name"
    if kind == "perm" and "." not in name:
        return f"{value!r}: a permission is '<app_label>.<codename>'"
    return ""


def rule_problems(raw: Any) -> list[str]:
    """What makes ``QUEUE_ACCESS`` unusable, one sentence each; empty when it is fine."""
    if raw is None:
        return []
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, (list, tuple)):
        return ["must be a list of rules (dicts), the first matching a queue deciding"]
    found: list[str] = []
    for n, rule in enumerate(raw):
        where = f"rule {n}"
        if not isinstance(rule, Mapping):
            found.append(f"{where} is not a dict")
            continue
        unknown = sorted(set(map(str, rule)) - set(RULE_KEYS))
        if unknown:
            found.append(f"{where} has unknown keys {unknown}; a rule takes {list(RULE_KEYS)}")
        if _globs(rule.get("QUEUES")) is None:
            found.append(f"{where}: QUEUES must be a glob or a non-empty list of globs")
        if "CONNECTION" in rule and _globs(rule["CONNECTION"]) is None:
            found.append(f"{where}: CONNECTION must be a glob or a non-empty list of globs")
        for key in ("VIEW", "OPERATE"):
            names = rule.get(key, [])
            if isinstance(names, str) or not isinstance(names, (list, tuple)):
                found.append(f"{where}: {key} must be a list of principals")
                continue
            found += [f"{where}: {key}: {p}" for p in map(_principal_problem, names) if p]
    return found


def parse_rules(raw: Any) -> tuple[Rule, ...] | None:
    """The rules, or None when ``QUEUE_ACCESS`` is not set (every queue as before).

    Raises ValueError when the setting is unusable (the system check says why first)."""
    if raw is None:
        return None
    problems = rule_problems(raw)
    if problems:
        raise ValueError("BULLPEN['QUEUE_ACCESS']: " + "; ".join(problems))
    return tuple(
        Rule(
            queues=_globs(rule["QUEUES"]) or (),
            connections=_globs(rule.get("CONNECTION", "*")) or ("*",),
            view=frozenset(rule.get("VIEW", ())),
            operate=frozenset(rule.get("OPERATE", ())),
        )
        for rule in raw
    )
