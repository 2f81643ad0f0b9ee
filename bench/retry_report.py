"""The retry-all benchmark's Markdown report: duration, memory and Redis commands per server."""

from __future__ import annotations

from retry_request import SERVER_TITLES, Run

TIMES = "\N{MULTIPLICATION SIGN}"
MINUS = "\N{MINUS SIGN}"


def mb(kb: int | None) -> str:
    return "—" if kb is None else f"{kb / 1024:.1f}"


def render(runs: list[Run], meta: dict[str, str], count: int) -> str:
    lines = [f"## Retry-all of {count:,} failed jobs: Bullpen vs Bull Board — {meta['date']}", ""]
    for key in ("cpu", "redis", "versions", "data", "seed", "memory"):
        if meta.get(key):
            lines.append(f"- {key}: {meta[key]}")
    lines.append("")
    head = [
        "server",
        "N",
        "duration s",
        "jobs/s",
        "RSS before MB",
        "peak RSS MB",
        f"peak {MINUS} before MB",
        "RSS after MB",
        "Redis cmds",
        "check",
    ]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * (len(head) - 2) + "---|")
    for run in runs:
        ok = not run.problems
        lines.append(
            "| "
            + " | ".join(
                [
                    SERVER_TITLES[run.server],
                    f"{count:,}",
                    f"{run.duration_s:.2f}",
                    f"{count / run.duration_s:,.0f}" if run.duration_s > 0 else "—",
                    mb(run.rss_before_kb),
                    mb(run.peak_kb),
                    mb(run.peak_kb - run.rss_before_kb),
                    mb(run.rss_after_kb),
                    f"{run.redis_cmds:,}",
                    "ok" if ok else "**failed**",
                ]
            )
            + " |"
        )
    by = {run.server: run for run in runs}
    if "bullboard" in by and "bullpen" in by:
        bb, bp = by["bullboard"], by["bullpen"]
        lines.append("")
        if bp.duration_s > 0 and bb.duration_s > 0:
            lines.append(
                f"Bullpen / Bull Board: duration {bp.duration_s / bb.duration_s:.2f}{TIMES}, "
                f"peak {MINUS} before {mb(bp.peak_kb - bp.rss_before_kb)} vs "
                f"{mb(bb.peak_kb - bb.rss_before_kb)} MB, Redis commands "
                f"{bp.redis_cmds / max(1, bb.redis_cmds):.2f}{TIMES}."
            )
    lines.append("")
    lines.append("Requests (one per server, each on its own queue of N failed jobs):")
    for run in runs:
        lines.append(
            f"- {SERVER_TITLES[run.server]} (pid {run.pid}, {run.queue}): `{run.request}` → "
            f"HTTP {run.status} `{run.answer.strip()[:160]}`"
        )
    lines.append("")
    lines.append("Redis commands during the request, by command:")
    for run in runs:
        top = ", ".join(f"{k} {v:,}" for k, v in list(run.redis_breakdown.items())[:10])
        lines.append(f"- {SERVER_TITLES[run.server]}: {top or '—'}")
    lines.append("")
    lines.append("Afterwards (failed set / wait list):")
    for run in runs:
        lines.append(
            f"- {SERVER_TITLES[run.server]}: {run.failed_left:,} failed, {run.waiting:,} waiting"
            + (f" — problems: {'; '.join(run.problems)}" if run.problems else "")
        )
    return "\n".join(lines) + "\n"
