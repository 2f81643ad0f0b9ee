"""Per-queue access: which queues a principal may view and operate (``BULLPEN["QUEUE_ACCESS"]``).

:func:`for_request` (or :func:`for_principal` for a websocket) is the one place that decides;
everything that shows or acts on a queue asks the :class:`QueueAccess` it returns, with the
queue's one URL name (``dashboard.auth.queue_lookup.canonical``). The rules live in
:mod:`dashboard.auth.queue_access_rules`.

QUEUE_ACCESS only narrows: the dashboard-wide gates (READ_ACCESS, WRITE_ACCESS, READ_ONLY and
per-queue ``read_only``) are checked first and still apply. Without the setting every queue is
open to whoever passes them, as before.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.http import HttpRequest

from dashboard.auth.access import is_read_only
from dashboard.auth.principal import Principal, from_request
from dashboard.auth.queue_access_rules import Holder, Level, Rule, level_of, parse_rules
from queues.config.settings import get_config, on_change
from queues.redis import connections

T = TypeVar("T")


@cache
def rules() -> tuple[Rule, ...] | None:
    """The configured rules, or None when ``QUEUE_ACCESS`` is not set."""
    return parse_rules(get_config().get("QUEUE_ACCESS"))


@cache
def rules_name_users() -> bool:
    """Whether some rule names a user (``user:<name>``), not only groups, permissions, scopes."""
    return any(p.startswith("user:") for rule in rules() or () for p in rule.view | rule.operate)


@on_change
def _forget_rules() -> None:
    rules.cache_clear()
    rules_name_users.cache_clear()


def restricted() -> bool:
    """Whether some queue may be hidden from someone (``QUEUE_ACCESS`` is set)."""
    return rules() is not None


class QueueAccess:
    """One principal's answers, kept for as long as the request (or the socket's check)."""

    def __init__(self, holder: Holder | None) -> None:
        self.holder = holder  # None: QUEUE_ACCESS is not set, nothing is narrowed
        self._levels: dict[tuple[str, str], Level] = {}

    @property
    def restricted(self) -> bool:
        return self.holder is not None

    @property
    def audience(self) -> Hashable:
        """Equal for principals who see the same queues (None: every queue): live messages
        are narrowed once per audience. A user's name counts only where rules name users."""
        if self.holder is None:
            return None
        return self.holder if rules_name_users() else replace(self.holder, username="")

    def level(self, queue: str, connection: str | None = None) -> Level:
        """``queue``: its slug, which names its connection when there are several (rules'
        ``QUEUES`` globs then match the part before it, ``CONNECTION`` the connection)."""
        found = rules()
        if self.holder is None or found is None:
            return "operate"
        if connection is None:
            connection, queue = connections.split_slug(queue)
        key = (connection, queue)
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = level_of(found, self.holder, queue, connection)
        return level

    def may_view(self, queue: str) -> bool:
        return self.level(queue) != "hidden"

    def may_operate(self, queue: str) -> bool:
        return self.level(queue) == "operate"

    def may_act_on(self, queue: str) -> bool:
        """May operate it, and it is not read-only (the whole dashboard or this queue).
        The permission to act at all (WRITE_ACCESS) is the caller's to check first."""
        return self.may_operate(queue) and not is_read_only(queue)

    def visible(self, items: Iterable[T], slug_of: Any = str) -> list[T]:
        """``items`` whose queue (``slug_of(item)``) this principal may view, in order."""
        if self.holder is None:
            return list(items)
        return [item for item in items if self.may_view(slug_of(item))]


EVERYTHING = QueueAccess(None)


def holder_of(principal: Principal) -> Holder:
    """What rules can name about ``principal``; for a session user this reads the database."""
    scopes: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    perms: frozenset[str] = frozenset()
    superuser = False
    user = principal.user
    if principal.via == "basic":
        given = (get_config().get("BASIC_AUTH_SCOPES") or {}).get(principal.username) or ()
        scopes = frozenset(str(s) for s in given)
    elif principal.via == "mcp":
        scopes = frozenset(str(s) for s in (get_config().get("MCP") or {}).get("SCOPES") or ())
    if (
        principal.via in ("session", "mcp")
        and user is not None
        and getattr(user, "is_active", False)
    ):
        if hasattr(user, "groups"):
            groups = frozenset(user.groups.values_list("name", flat=True))
        if hasattr(user, "get_all_permissions"):
            perms = frozenset(user.get_all_permissions())
        superuser = bool(getattr(user, "is_superuser", False))
    return Holder(
        username=principal.username,
        authenticated=principal.authenticated,
        groups=groups,
        perms=perms,
        superuser=superuser,
        scopes=scopes,
    )


async def for_principal(principal: Principal) -> QueueAccess:
    if not restricted():
        return EVERYTHING
    if principal.user is not None:  # a Django user's groups and permissions are in the database
        return QueueAccess(await sync_to_async(holder_of)(principal))
    return QueueAccess(holder_of(principal))


async def for_request(request: HttpRequest) -> QueueAccess:
    """What the request's principal may view and operate, decided once per request."""
    if not restricted():
        return EVERYTHING  # no principal needed: open reads stay free of password checks
    known: QueueAccess | None = getattr(request, "_bullpen_queue_access", None)
    if known is None:
        known = await for_principal(await from_request(request))
        request._bullpen_queue_access = known  # type: ignore[attr-defined]
    return known
