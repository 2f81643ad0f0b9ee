"""Who may read and who may act, and where read-only applies.

``READ_ACCESS`` and ``WRITE_ACCESS`` name callables taking a :class:`Principal` and returning
whether it may read / act. The defaults suit a site that mounts Bullpen: staff users with the
``bullpen.view`` (or ``bullpen.operate``) permission read, staff with ``bullpen.operate`` act,
and holders of valid basic credentials do both. The standalone site keeps these defaults once
it has credentials, unless ``BULLPEN_OPEN_READS=1`` opens reads to anyone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from asgiref.sync import sync_to_async
from django.utils.module_loading import import_string

from dashboard.auth.principal import Principal
from queues.config.queue_options import queue_options
from queues.config.settings import get_config

Check = Callable[[Principal], bool]


def anyone(principal: Principal) -> bool:
    return True


def _staff_with(principal: Principal, *perms: str) -> bool:
    user = principal.user
    if principal.via != "session" or user is None:
        return False
    if not (user.is_active and user.is_staff):
        return False
    return any(user.has_perm(perm) for perm in perms)


def staff_or_basic_reader(principal: Principal) -> bool:
    return principal.via == "basic" or _staff_with(principal, "bullpen.view", "bullpen.operate")


def staff_or_basic_operator(principal: Principal) -> bool:
    return principal.via == "basic" or _staff_with(principal, "bullpen.operate")


@cache
def _load(dotted: str) -> Check:
    check: Check = import_string(dotted)
    return check


def read_check() -> Check:
    return _load(get_config()["READ_ACCESS"])


def write_check() -> Check:
    return _load(get_config()["WRITE_ACCESS"])


def reads_are_open() -> bool:
    """Anyone may read everything: the JSON fast path may answer without looking at the user.
    Not so when QUEUE_ACCESS is set, even with ``anyone`` reading: who asks decides which
    queues they see."""
    return read_check() is anyone and get_config().get("QUEUE_ACCESS") is None


async def allows(check: Check, principal: Principal) -> bool:
    if check is anyone:
        return True
    if principal.via == "session":  # permission lookups touch the database
        return bool(await sync_to_async(check)(principal))
    return bool(check(principal))


def is_read_only(queue_slug: str | None = None) -> bool:
    """Whether actions are refused, on the whole dashboard or on the queue with this URL name
    (its one name: ``dashboard.auth.queue_lookup.canonical``)."""
    config = get_config()
    if config.get("READ_ONLY"):
        return True
    if queue_slug is None:
        return False
    return bool(queue_options(queue_slug).get("read_only", False))
