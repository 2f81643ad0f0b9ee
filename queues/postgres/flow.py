"""A Postgres store's flow: its root (up through each job's parent columns), then down through
each parent's children (BullMQ's ``job_dependency`` rows), level by level, each level in one
round trip: per node its row, its children counted by status (``get_dependency_counts``) and
the first ``max_children`` of each status (``get_dependencies_page``). The answer has the shape
:func:`queues.reads.flow.read_flow` gives for Redis."""

from __future__ import annotations

from typing import Any

from bullmq.backends.postgres_backend import _row_to_job_map

from queues.errors import JobNotFound
from queues.postgres import rows
from queues.postgres.queue_reads import ref_of
from queues.postgres.sessions import session
from queues.reads.flow import FlowNode, flow_answer, walk_levels
from queues.reads.job_fields import job_from_hash
from queues.reads.keys import QueueRef

# Parents followed up at most: a longer chain is a loop some writer made.
MAX_ANCESTORS = 100
# Children kinds (BullMQ's dependency statuses), in the order a tree shows them.
_KINDS = ("failed", "ignored", "pending", "processed")


async def _root(ref: QueueRef, job_id: str) -> tuple[QueueRef, str, int]:
    reads = session(ref.connection)
    here, below, levels = (ref, job_id), (ref, job_id), 0
    while True:
        found = await reads.command("get_job_data", [here[0].name, here[1]])
        if not found:
            if levels == 0:
                raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
            return below[0], below[1], levels - 1
        row = found[0]
        if row.get("parent_id") is None or not row.get("parent_queue") or levels == MAX_ANCESTORS:
            return here[0], here[1], levels
        up = (ref_of(str(row["parent_queue"]), ref.connection), str(row["parent_id"]))
        below, here, levels = here, up, levels + 1


def _describe(node: FlowNode, found: list[dict[str, Any]]) -> None:
    out = node.out
    out.update({"queue": node.ref.slug, "queueName": node.ref.name, "id": node.id})
    if not found:
        out.update({"state": "removed", "name": None})
        return
    job = job_from_hash(node.id, _row_to_job_map(found[0]))
    out.update(
        {
            "name": job.get("name"),
            "state": rows.job_state(found[0]),
            "progress": job.get("progress"),
            "attemptsMade": job.get("attemptsMade"),
            "failedReason": job.get("failedReason") or None,
        }
    )


def _child(node: FlowNode, kind: str, child_key: str) -> FlowNode:
    queue, _, child_id = child_key.partition(":")
    return FlowNode(ref_of(queue, node.ref.connection), child_id, {"via": kind}, node)


async def _read_level(
    nodes: list[FlowNode], with_children: bool, max_children: int
) -> list[FlowNode]:
    calls: list[tuple[str, list[Any]]] = []
    for node in nodes:
        calls.append(("get_job_data", [node.ref.name, node.id]))
        calls.append(("get_dependency_counts", [node.ref.name, node.id]))
        if with_children:
            calls += [
                ("get_dependencies_page", [node.ref.name, node.id, kind, 0, max_children])
                for kind in _KINDS
            ]
    replies = await session(nodes[0].ref.connection).commands(calls)
    per_node = 2 + (len(_KINDS) if with_children else 0)
    children: list[FlowNode] = []
    for position, node in enumerate(nodes):
        own = replies[position * per_node : (position + 1) * per_node]
        _describe(node, own[0])
        counted = own[1][0] if own[1] else {}
        counts = {kind: int(counted.get(_count_column(kind)) or 0) for kind in _KINDS}
        node.out["childCounts"] = counts
        shown: list[FlowNode] = []
        if with_children:
            for kind, page in zip(_KINDS, own[2:], strict=True):
                for row in page:
                    if len(shown) < max_children:
                        shown.append(_child(node, kind, str(row["child_key"])))
        node.out["children"] = [child.out for child in shown]
        node.out["more"] = max(0, sum(counts.values()) - len(shown))
        if not with_children:
            node.out["cutAtDepth"] = node.out["more"] > 0
        children += shown
    return children


def _count_column(kind: str) -> str:
    return "unprocessed" if kind == "pending" else kind


async def read_flow(
    ref: QueueRef, job_id: str, depth: int, max_children: int, max_nodes: int | None
) -> dict[str, Any]:
    root_ref, root_id, above = await _root(ref, job_id)
    root = FlowNode(root_ref, root_id)
    await walk_levels(root, depth, max_children, max_nodes, _read_level)
    return flow_answer(root, ref, job_id, above, depth, max_children)
