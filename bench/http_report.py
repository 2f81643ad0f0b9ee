"""The HTTP benchmark's Markdown report: each page's figures per server, the Bullpen / Bull Board
ratios and the targets' verdicts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from http_pages import SERVER_TITLES, TIMES, Cell, Page


def fmt_num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.{max(digits, 2)}f}"


# (label, getter, lower is better)
METRICS: list[tuple[str, Callable[[Cell], float | None], bool]] = [
    ("p50 ms, 1 conn", lambda c: c.c1.p50_ms if c.c1 else None, True),
    ("p99 ms, 1 conn", lambda c: c.c1.p99_ms if c.c1 else None, True),
    ("req/s, 1 conn", lambda c: c.c1.rps if c.c1 else None, False),
    ("p50 ms, 10 conn", lambda c: c.c10.p50_ms if c.c10 else None, True),
    ("p99 ms, 10 conn", lambda c: c.c10.p99_ms if c.c10 else None, True),
    ("req/s, 10 conn", lambda c: c.c10.rps if c.c10 else None, False),
    ("Redis cmds/req", lambda c: c.cmds.per_request if c.cmds else None, True),
    ("response bytes", lambda c: c.cmds.bytes_per_response if c.cmds else None, True),
]

# (page key, metric label) -> (op, bound, description)
TARGETS = {
    ("overview", "p50 ms, 1 conn"): ("<=", 0.5, f"overview p50 ≤ 0.5{TIMES} Bull Board"),
    ("overview", "req/s, 10 conn"): (">=", 1.0, "overview req/s at 10 conn ≥ Bull Board"),
    ("failed1", "p50 ms, 1 conn"): ("<=", 0.5, f"failed page 1 p50 ≤ 0.5{TIMES} Bull Board"),
    ("failed1", "req/s, 10 conn"): (">=", 1.0, "failed page 1 req/s at 10 conn ≥ Bull Board"),
    ("faileddeep", "p50 ms, 1 conn"): ("<=", 0.5, f"deep failed page p50 ≤ 0.5{TIMES} Bull Board"),
    ("faileddeep", "req/s, 10 conn"): (">=", 1.0, "deep failed page req/s at 10 conn ≥ Bull Board"),
}


def render(
    pages: list[Page], servers: list[str], meta: dict[str, str]
) -> tuple[str, list[dict[str, Any]]]:
    lines = []
    lines.append(f"## Bullpen vs Bull Board — {meta['date']}")
    lines.append("")
    for k in (
        "cpu",
        "redis",
        "data",
        "seed",
        "versions",
        "wrk",
    ):
        if meta.get(k):
            lines.append(f"- {k}: {meta[k]}")
    lines.append("")
    both = "bullboard" in servers and "bullpen" in servers
    head = ["page", "metric"] + [SERVER_TITLES[s] for s in servers]
    if both:
        head += ["Bullpen / Bull Board", "target", "met"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append(
        "|"
        + "|".join(
            ["---"] * 2
            + ["---:"] * (len(head) - 2 - (3 if both else 0))
            + (["---:", "---", "---"] if both else [])
        )
        + "|"
    )
    verdicts = []
    for page in pages:
        for n_metric, (label, get, _lower_better) in enumerate(METRICS):
            vals = []
            for s in servers:
                cell = page.cells.get(s)
                vals.append(get(cell) if cell else None)
            row = [f"**{page.title}**" if n_metric == 0 else "", label] + [fmt_num(v) for v in vals]
            if both:
                bb, bp = vals[0], vals[1]
                ratio = (bp / bb) if (bb and bp is not None) else None
                row.append(f"{ratio:.2f}{TIMES}" if ratio is not None else "—")
                target = TARGETS.get((page.key, label))
                if target and ratio is not None:
                    op, bound, desc = target
                    met = ratio <= bound if op == "<=" else ratio >= bound
                    row += [
                        f"{op.replace('<=', '≤').replace('>=', '≥')} {bound}{TIMES}",
                        "yes" if met else "**no**",
                    ]
                    verdicts.append({"target": desc, "ratio": round(ratio, 3), "met": met})
                else:
                    row += ["", ""]
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "Ratio = Bullpen ÷ Bull Board "
        "(latency and commands: lower is better; req/s: higher is better)."
    )
    if verdicts:
        lines.append("")
        n_met = sum(1 for v in verdicts if v["met"])
        lines.append(f"Targets met: {n_met}/{len(verdicts)}")
        for v in verdicts:
            lines.append(
                f"- {'met' if v['met'] else 'NOT met'}: {v['target']} (ratio {v['ratio']:.2f})"
            )
    lines.append("")
    lines.append("URLs:")
    for page in pages:
        for s in servers:
            lines.append(f"- {page.title}, {SERVER_TITLES[s]}: `GET {page.urls[s]}`")
    details = []
    for page in pages:
        for s in servers:
            cell = page.cells.get(s)
            if cell and cell.cmds and cell.cmds.breakdown:
                top = ", ".join(f"{k} {v:g}" for k, v in list(cell.cmds.breakdown.items())[:12])
                extra = (
                    f" (idle noise subtracted: {cell.cmds.idle_per_request:.2f}/req)"
                    if cell.cmds.idle_per_request
                    else ""
                )
                details.append(f"- {page.title}, {SERVER_TITLES[s]}: {top}{extra}")
            for w, name in ((cell and cell.c1, "1 conn"), (cell and cell.c10, "10 conn")):
                if w and w.errors:
                    details.append(
                        f"- {page.title}, {SERVER_TITLES[s]}, {name}: wrk reported {w.errors}"
                    )
            if cell and cell.cmds and cell.cmds.status_errors:
                details.append(
                    f"- {page.title}, {SERVER_TITLES[s]}: {cell.cmds.status_errors} non-200 answers"
                )
            if cell and cell.note:
                details.append(f"- {page.title}, {SERVER_TITLES[s]}: {cell.note}")
    if details:
        lines.append("")
        lines.append("Redis commands per request, by command (and anomalies):")
        lines.extend(details)
    return "\n".join(lines) + "\n", verdicts
