"""A job's parent and children as one user may see them: those in a queue it may not view
(QUEUE_ACCESS), or in one the dashboard cannot name, keep their place with neither queue nor
id, as the flow tree's hidden nodes do; the job's own fields naming its parent go too."""

from __future__ import annotations

from typing import Any

from dashboard.auth.queue_access import QueueAccess

HIDDEN: dict[str, Any] = {"hidden": True}
# The job hash's fields that name the parent's queue and id (``parentRef`` is read from them).
_PARENT_FIELDS = ("parentKey", "parent")


def seen_by(access: QueueAccess, job: dict[str, Any]) -> dict[str, Any]:
    """``job`` (as ``queues.reads.detail.job_detail`` reads it) with hidden relatives reduced."""
    if not access.restricted:
        return job
    seen = dict(job)
    parent = job.get("parentRef")
    if parent is not None or job.get("parentKey"):
        if not _may_view(access, parent):
            seen["parentRef"] = HIDDEN
            for field in _PARENT_FIELDS:
                seen.pop(field, None)
            seen["opts"] = _without_parent(job.get("opts"))
            if not isinstance(seen["opts"], dict) and "opts" in (job.get("truncated") or {}):
                seen["truncated"] = {k: v for k, v in job["truncated"].items() if k != "opts"}
    children = job.get("children")
    if isinstance(children, dict):
        seen["children"] = {
            kind: [child if _may_view(access, child) else HIDDEN for child in listed]
            for kind, listed in children.items()
        }
    return seen


def _without_parent(opts: Any) -> Any:
    """A child's options name its parent (``parent``: id and queue): kept without it. Options
    that are not an object (cut by the page's cap, or not JSON) cannot be picked apart, so
    they are not shown at all."""
    if isinstance(opts, dict):
        return {key: value for key, value in opts.items() if key != "parent"}
    return None


def _may_view(access: QueueAccess, relative: Any) -> bool:
    slug = relative.get("slug") if isinstance(relative, dict) else None
    return bool(slug) and access.may_view(str(slug))
