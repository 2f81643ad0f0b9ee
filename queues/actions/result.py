"""What an action did, for the API's answer and the audit log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ActionResult:
    action: str
    queue: str | None = None
    job_ids: list[str] = field(default_factory=list)
    count: int = 0
    detail: dict[str, Any] = field(default_factory=dict)
    # 202: accepted, running as a bulk action (the detail says where to follow it).
    status: int = 200
    # The action wrote its own audit row (a bulk action's start, with its id).
    audited: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "action": self.action,
            "queue": self.queue,
            "jobIds": self.job_ids,
            "count": self.count,
            **self.detail,
        }
