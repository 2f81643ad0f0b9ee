"""The Markdown report: one table (rows: number of queues x server), the targets, the notes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from results import ServerResult, SizeResult

TITLES = {"bullpen": "Bullpen", "bullboard": "Bull Board"}


@dataclass(frozen=True)
class Target:
    """A bound on one of Bullpen's figures at one number of queues (from the product issue)."""

    queues: int
    metric: str
    bound: float
    text: str
    shown: Callable[[float], str]


def _ms(v: float) -> str:
    return f"{v:,.0f} ms"


def _kb(v: float) -> str:
    return f"{v / 1000:,.0f} KB"


def _count(v: float) -> str:
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


TARGETS = [
    Target(2000, "network_idle_ms", 1000, "network idle ≤ 1 s at 2,000 queues", _ms),
    Target(2000, "requests", 10, "≤ 10 requests at 2,000 queues", _count),
    Target(2000, "html_body_bytes", 300_000, "HTML ≤ 300 KB at 2,000 queues", _kb),
    Target(
        2000,
        "commands_per_queue",
        10,
        "≤ 10 Redis commands per queue per page view at 2,000 queues",
        _count,
    ),
    Target(
        2000,
        "idle_viewer_per_min",
        5000,
        "one idle viewer ≤ 5,000 Redis commands a minute at 2,000 queues",
        _count,
    ),
    Target(10000, "network_idle_ms", 3000, "network idle ≤ 3 s at 10,000 queues", _ms),
]


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    if digits and abs(value) < 100:
        return f"{value:,.{digits}f}"
    return f"{value:,.0f}"


def kb(value: float | None) -> str:
    return "—" if value is None else f"{value / 1000:,.0f}"


def mib(value: float | None) -> str:
    return "—" if value is None else f"{value / 1048576:,.0f}"


COLUMNS: list[tuple[str, Callable[[ServerResult], str]]] = [
    ("FCP ms", lambda r: fmt(r.metric("fcp_ms"))),
    ("network idle ms", lambda r: fmt(r.metric("network_idle_ms"))),
    ("requests", lambda r: fmt(r.metric("requests"))),
    ("HTML KB", lambda r: kb(r.metric("html_body_bytes"))),
    ("total KB", lambda r: kb(r.metric("total_wire_bytes"))),
    ("Redis cmds / view", lambda r: fmt(r.metric("commands_per_view"))),
    ("cmds / view / queue", lambda r: fmt(r.metric("commands_per_queue"), 1)),
    ("idle viewer cmds/min", lambda r: fmt(r.metric("idle_viewer_per_min"))),
    ("server RSS MiB", lambda r: mib(r.metric("rss_bytes"))),
]


def verdicts(sizes: list[SizeResult]) -> list[dict[str, Any]]:
    by_queues = {size.queues: size for size in sizes}
    out = []
    for target in TARGETS:
        size = by_queues.get(target.queues)
        bullpen = size.servers.get("bullpen") if size else None
        value = bullpen.metric(target.metric) if bullpen else None
        loads = bullpen.loads if bullpen else []
        never_idle = bool(loads) and all(load.network_idle_ms is None for load in loads)
        if value is None and target.metric == "network_idle_ms" and never_idle:
            state = "not met"
        elif value is None:
            state = "not measured"
        else:
            state = "met" if value <= target.bound else "not met"
        bullboard = size.servers.get("bullboard") if size else None
        reference = bullboard.metric(target.metric) if bullboard else None
        out.append(
            {
                "target": target.text,
                "queues": target.queues,
                "metric": target.metric,
                "bound": target.bound,
                "value": value,
                "bullboard": reference,
                "state": state,
                "shown": (
                    target.shown(value)
                    if value is not None
                    else "never idle within the load timeout"
                    if state == "not met"
                    else "—"
                ),
                "bullboard_shown": target.shown(reference) if reference is not None else "",
            }
        )
    return out


def render(sizes: list[SizeResult], meta: dict[str, str], loads: int) -> str:
    lines = [f"## Many queues: Bullpen and Bull Board — {meta['date']}", ""]
    for key in ("machine", "redis", "versions", "method"):
        if meta.get(key):
            lines.append(f"- {key}: {meta[key]}")
    lines.append("")
    head = ["queues", "server"] + [title for title, _ in COLUMNS]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---:", "---"] + ["---:"] * len(COLUMNS)) + "|")
    for size in sizes:
        for name, result in size.servers.items():
            cells = [f"{size.queues:,}", TITLES[name]] + [get(result) for _, get in COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Medians of {loads} cold loads (fresh browser context) after one warm-up load. "
        "KB = 1,000 bytes; HTML = the page's body as decoded, total = every response as "
        "transferred, headers included. Redis commands net of what Redis ran in a quiet "
        "window of the same length."
    )
    lines.append("")
    lines.append("Targets (Bullpen):")
    for v in verdicts(sizes):
        reference = f"; Bull Board {v['bullboard_shown']}" if v["bullboard_shown"] else ""
        if v["state"] == "not measured":
            lines.append(f"- not measured: {v['target']}")
        else:
            lines.append(f"- {v['state']}: {v['target']} (Bullpen {v['shown']}{reference})")
    api_lines = _api_table(sizes)
    if api_lines:
        lines.append("")
        lines.extend(api_lines)
    lines.append("")
    lines.append("Notes:")
    for size in sizes:
        jobs = size.seed.get("jobs", {})
        job_text = ", ".join(f"{n:,} {state}" for state, n in jobs.items())
        lines.append(
            f"- {size.queues:,} queues: seeded in {size.seed_seconds:.1f} s ({job_text}); "
            f"Redis {size.redis_memory_bytes / 1048576:,.0f} MiB, {size.keys:,} keys"
        )
        for name, result in size.servers.items():
            lines.extend(_server_notes(size.queues, name, result))
    return "\n".join(lines) + "\n"


def _api_table(sizes: list[SizeResult]) -> list[str]:
    rows = []
    for size in sizes:
        for name, result in size.servers.items():
            if not result.api:
                continue
            rows.append(
                f"| {size.queues:,} | {TITLES[name]} | `{result.api[0].path}` "
                f"| {fmt(result.median_api(lambda c: c.ms))} "
                f"| {kb(result.median_api(lambda c: c.bytes))} "
                f"| {fmt(result.median_api(lambda c: c.commands))} |"
            )
    if not rows:
        return []
    return [
        "The overview's JSON route alone (median of the requests):",
        "",
        "| queues | server | route | ms | KB | Redis cmds |",
        "|---:|---|---|---:|---:|---:|",
        *rows,
    ]


def _path_of(url: str) -> str:
    """The path and query of a loopback URL, the whole URL of any other."""
    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost"):
        return (parts.path + (f"?{parts.query}" if parts.query else ""))[:80]
    return url[:80]


def _server_notes(queues: int, name: str, result: ServerResult) -> list[str]:
    title = f"{queues:,} queues, {TITLES[name]}"
    lines = []
    if result.loads:
        idle_each = " / ".join(fmt(load.network_idle_ms) for load in result.loads)
        requests = " / ".join(str(load.requests) for load in result.loads)
        lasts = sorted({_path_of(load.last_request) for load in result.loads if load.last_request})
        loads = " / ".join(f"{load.load_average:.1f}" for load in result.loads)
        lines.append(
            f"- {title}, each load: network idle {idle_each} ms; requests {requests}; "
            f"last to end: {', '.join(f'`{p}`' for p in lasts)}; machine load average {loads}"
        )
    if result.view_commands:
        top = result.view_commands[len(result.view_commands) // 2].by_command
        shown = ", ".join(f"{cmd} {n:,.0f}" for cmd, n in list(top.items())[:10])
        lines.append(f"- {title}, Redis commands of one page view: {shown}")
    if result.idle_viewer:
        idle = result.idle_viewer
        shown = ", ".join(f"{cmd} {n:,.0f}" for cmd, n in list(idle.by_command_per_min.items())[:8])
        lines.append(
            f"- {title}, idle viewer: {idle.with_viewer_per_min:,.0f} cmds/min with the page "
            f"open, {idle.quiet_per_min:,.0f} without ({idle.seconds:.0f} s windows); "
            f"the page made {idle.requests_per_min:,.1f} requests a minute"
            + (f"; by command: {shown}" if shown else "")
        )
        poll_cost = result.median_api(lambda call: call.commands)
        if name == "bullboard" and poll_cost:
            lines.append(
                f"- {title}: at its 5 s polling interval, 12 polls a minute would cost "
                f"{12 * poll_cost:,.0f} commands a minute (12 times the JSON route's "
                f"{poll_cost:,.0f}); compare the requests the page made above"
            )
    for load in result.loads:
        if load.note:
            lines.append(f"- {title}: {load.note}")
            break
    failed = sorted({_path_of(url) for load in result.loads for url in load.failed_requests})
    if failed:
        most = max(len(load.failed_requests) for load in result.loads)
        shown = ", ".join(f"`{url}`" for url in failed[:3]) + (", …" if len(failed) > 3 else "")
        lines.append(f"- {title}: up to {most} failed requests in a load: {shown}")
    statuses = {load.status for load in result.loads if load.status not in (None, 200)}
    if statuses:
        lines.append(f"- {title}: the page answered HTTP {', '.join(map(str, statuses))}")
    repeated = max((len(load.repeated_requests) for load in result.loads), default=0)
    if repeated:
        lines.append(
            f"- {title}: up to {repeated} requests in a load for a URL the page had "
            "already asked for"
        )
    sockets = max((load.websockets for load in result.loads), default=0)
    if sockets:
        lines.append(f"- {title}: {sockets} websocket(s) opened by the page (not counted)")
    lines.extend(f"- {title}: {note}" for note in result.notes)
    return lines
