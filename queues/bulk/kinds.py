"""Every kind of bulk action, by the name the API, the record and the audit log use.

A new kind (acting on the matches of a search, say) is a class with ``prepare`` and ``run``
(kind.py) registered here; the runner, the record and the status API need nothing more.
"""

from __future__ import annotations

from queues.bulk.job_kinds import REMOVE_GROUP, RETRY_GROUP
from queues.bulk.kind import Kind
from queues.bulk.match_kinds import PROMOTE_MATCHES, REMOVE_MATCHES, RETRY_MATCHES
from queues.bulk.set_kinds import Clean, PromoteAll, RetryAll

_ALL: tuple[Kind, ...] = (
    RetryAll(),
    PromoteAll(),
    Clean(),
    RETRY_GROUP,
    REMOVE_GROUP,
    RETRY_MATCHES,
    PROMOTE_MATCHES,
    REMOVE_MATCHES,
)
KINDS: dict[str, Kind] = {kind.name: kind for kind in _ALL}
