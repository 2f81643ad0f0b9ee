"""The live benchmark's report: each window's share of the Redis commands, the targets'
verdicts, and the Markdown table with its notes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from live_settings import (
    BULLBOARD_INTERVAL,
    LATENCY_P99_MS,
    MINUS,
    SCALE_BOUND,
    SOAK_GROWTH,
    SOAK_GROWTH_MIB,
    TIMES,
)
from live_windows import Window


def fmt(v: float | None, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def signed(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "—"
    return ("+" if v >= 0 else MINUS) + f"{abs(v):,.0f}"


def lat(d: dict[str, Any] | None) -> str:
    if not d or not d.get("n"):
        return "—"
    return f"{d['p50']:.0f} / {d['p99']:.0f} / {d['max']:.0f}"


def attribute(windows: list[Window]) -> float:
    """Fill in delta_per_min: commands beyond what the load alone costs per completed job."""
    base = [w for w in windows if w.server == "baseline" and w.jobs_completed > 0]
    if not base:
        return float("nan")
    per_job = sum(w.total for w in base) / sum(w.jobs_completed for w in base)
    for w in windows:
        if w.jobs_completed > 0 and w.seconds > 0:
            delta = w.total - per_job * w.jobs_completed
            w.delta_per_min = delta / w.seconds * 60
            if w.server == "bullboard" and w.tab_requests:
                w.delta_per_poll = delta / w.tab_requests
    return float(per_job)


@dataclass
class Verdict:
    what: str
    value: str
    bound: str
    met: bool | None


def verdicts(windows: list[Window], soak: Window | None, per_poll: float) -> list[Verdict]:
    out: list[Verdict] = []
    pen = {
        w.clients: w for w in windows if w.server == "bullpen" and not w.label.startswith("soak")
    }
    pen.pop(0, None)
    base_noise = [abs(w.delta_per_min or 0) for w in windows if w.server == "baseline"]
    noise = max(base_noise) if base_noise else 0.0

    one, hundred = pen.get(1), pen.get(100)
    if one and hundred and one.delta_per_min is not None and hundred.delta_per_min is not None:
        bound = SCALE_BOUND * one.delta_per_min
        out.append(
            Verdict(
                f"Bullpen Δ cmds/min, 100 viewers ≤ {SCALE_BOUND}{TIMES} 1 viewer",
                f"{signed(hundred.delta_per_min)} vs {signed(one.delta_per_min)} "
                f"(totals {hundred.per_min:,.0f} vs {one.per_min:,.0f}: "
                f"{hundred.per_min / one.per_min:.3f}{TIMES})",
                f"≤ {signed(bound)} (baseline noise ±{noise:,.0f})",
                hundred.delta_per_min <= max(bound, one.delta_per_min + noise),
            )
        )
    if per_poll and pen:
        # One tab polls 60 / BULLBOARD_INTERVAL times a minute. Its cost per poll is measured
        # on the idle Redis before the load starts: exact, where the windows' Δ of a few
        # thousand commands a minute is within the load's own noise.
        one_tab = per_poll * 60 / BULLBOARD_INTERVAL
        worst = max(pen.values(), key=lambda w: w.delta_per_min or 0)
        out.append(
            Verdict(
                "Bullpen Δ cmds/min (worst N) ≤ one Bull Board tab's",
                f"{signed(worst.delta_per_min)} ({worst.clients} viewers)",
                f"≤ {one_tab:,.0f} ({per_poll:,.0f} per poll "
                f"{TIMES} {60 / BULLBOARD_INTERVAL:g} polls/min)",
                (worst.delta_per_min or 0) <= one_tab,
            )
        )
    for n, w in sorted(pen.items()):
        for key, title in (
            ("queue", "queue page (progress + rows)"),
            ("overview", "overview counts"),
        ):
            d = w.latency.get(key)
            if d and d.get("n"):
                out.append(
                    Verdict(
                        f"event→client p99, {title}, {n} viewers",
                        f"{d['p99']:.0f} ms",
                        f"≤ {LATENCY_P99_MS:.0f} ms",
                        d["p99"] <= LATENCY_P99_MS,
                    )
                )
    if soak and soak.rss_start and soak.rss_end:
        growth = soak.rss_end - soak.rss_start
        bound = min(SOAK_GROWTH * soak.rss_start, SOAK_GROWTH_MIB)
        peak = max(v for _, v in soak.rss_samples)
        out.append(
            Verdict(
                f"RSS flat over the soak (end {MINUS} start)",
                f"{soak.rss_start:.1f} → {soak.rss_end:.1f} MiB (max {peak:.1f})",
                f"≤ +{bound:.1f} MiB",
                growth <= bound,
            )
        )
    elif not soak:
        out.append(Verdict("RSS flat over the soak", "not run (--soak-minutes)", "", None))
    return out


def render(
    windows: list[Window], meta: dict[str, Any], per_job: float
) -> tuple[str, list[Verdict]]:
    lines = [f"## Bullpen live updates vs Bull Board polling — {meta['date']}", ""]
    keys = ["cpu", "redis", "load", "windows", "bull board poll", "websocket extensions"]
    keys.append("bullpen processes")
    for k in (*keys, "versions", "fd limit"):
        if meta.get(k):
            lines.append(f"- {k}: {meta[k]}")
    lines.append(
        f"- Δ = Redis cmds/min beyond the load generator's own: window total {MINUS} "
        f"{per_job:.1f} cmds {TIMES} jobs completed in the window (the baselines' cmds per job)"
    )
    busiest = max((w.cpu.get("other processes", 0.0) for w in windows), default=0.0)
    if busiest >= 20:
        lines.append(
            f"- ⚠ other processes on this machine used up to {busiest:.0f} % of a core during "
            f"the windows (see the CPU notes): latency and server CPU figures are contended"
        )
    lines.append("")
    head = [
        "window",
        "jobs/s",
        "Redis cmds/min",
        "Δ cmds/min",
        "Redis CPU",
        "server CPU",
        "server RSS MiB",
        "queue page ms p50/p99/max",
        "overview ms p50/p99/max",
        "msgs/s per viewer (queue / overview)",
    ]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for w in windows:
        rss = (
            f"{w.rss_start:.1f} → {w.rss_end:.1f}"
            if w.rss_start is not None and w.rss_end is not None
            else "—"
        )
        if w.server == "bullpen" and w.clients:
            msgs = f"{fmt(w.msgs_per_s.get('queue'), 1)} / {fmt(w.msgs_per_s.get('overview'), 1)}"
        elif w.server == "bullboard":
            msgs = f"{w.tab_requests} polls, p50 {fmt(w.tab_p50_ms)} ms"
        else:
            msgs = "—"
        lines.append(
            "| "
            + " | ".join(
                [
                    w.label,
                    fmt(w.jobs_per_s),
                    fmt(w.per_min),
                    signed(w.delta_per_min),
                    f"{w.redis_cpu_pct:.0f} %",
                    f"{w.server_cpu_pct:.0f} %" if w.server_cpu_pct is not None else "—",
                    rss if w.server != "baseline" else f"Bullpen {rss}",
                    lat(w.latency.get("queue")) if w.server == "bullpen" else "—",
                    lat(w.latency.get("overview")) if w.server == "bullpen" else "—",
                    msgs,
                ]
            )
            + " |"
        )
    lines.append("")
    soak = next((w for w in windows if w.label.startswith("soak")), None)
    vs = verdicts(windows, soak, meta.get("bullboard_per_poll", 0.0))
    lines.append("| target | value | bound | met |")
    lines.append("|---|---|---|---|")
    for v in vs:
        met = "—" if v.met is None else ("met" if v.met else "**not met**")
        lines.append(f"| {v.what} | {v.value} | {v.bound} | {met} |")
    lines.append("")

    details = []
    base = [w for w in windows if w.server == "baseline"]
    for w in windows:
        if w.server == "baseline":
            details.append(
                f"- {w.label}: {w.per_job:.2f} cmds per job; CPU (% of one core): "
                + ", ".join(f"{k} {v:.0f}" for k, v in w.cpu.items())
            )
            continue
        # Per-command increase over the (mean) baseline, per minute.
        extra = {}
        for name in set(w.calls) | {k for b in base for k in b.calls}:
            mine = w.calls.get(name, 0) / w.seconds * 60
            theirs = sum(b.calls.get(name, 0) for b in base) / sum(b.seconds for b in base) * 60
            if w.jobs_per_s and base:
                bj = sum(b.jobs_per_s for b in base) / len(base)
                theirs *= w.jobs_per_s / bj if bj else 1.0
            if abs(mine - theirs) >= 60:
                extra[name] = mine - theirs
        top = sorted(extra.items(), key=lambda kv: -abs(kv[1]))[:8]
        parts = [f"{k} {signed(v)}" for k, v in top]
        line = f"- {w.label}: " + (", ".join(parts) if parts else "no command changed by ≥ 1/s")
        if w.delta_per_poll is not None:
            line += f"; Δ per poll {w.delta_per_poll:,.0f} cmds"
        if w.server == "bullpen" and w.clients:
            q = w.latency
            line += (
                f"; progress {lat(q.get('progress'))} ms ({q['progress']['n']:,}), "
                f"rows {lat(q.get('rows'))} ms ({q['rows']['n']:,}), "
                f"queue-page counts {lat(q.get('queue-counts'))} ms; "
                f"overview counts from the server's send to receipt "
                f"{lat(q.get('overview-sent'))} ms; "
                f"opened in {w.connect_s:.1f} s by {w.client_procs} client "
                f"process{'es' if w.client_procs != 1 else ''}"
            )
            if w.slow_seconds:
                shown = ", ".join(f"{sec}s: {ms:,}" for sec, ms in w.slow_seconds[:12])
                more = len(w.slow_seconds) - 12
                line += (
                    f"; {len(w.slow_seconds)} of {w.seconds:.0f} seconds had a queue-page update "
                    f"over {LATENCY_P99_MS:.0f} ms (second: worst ms) {shown}"
                    + (f" and {more} more" if more > 0 else "")
                )
            if w.completed_seen is not None and w.bench00_completed:
                line += (
                    f"; completed rows seen by one queue viewer {w.completed_seen:,} "
                    f"of ~{w.bench00_completed:,.0f}"
                )
        line += "; CPU (% of one core): " + ", ".join(f"{k} {v:.0f}" for k, v in w.cpu.items())
        line += f"; load average {w.load_average}"
        if w.readers:
            line += f"; {w.readers}"
        for e in w.errors:
            line += f"\n  - ⚠ {e}"
        details.append(line)
    if soak and soak.rss_samples:
        details.append(
            "- soak RSS samples (s: MiB): "
            + ", ".join(f"{t:.0f}: {v:.1f}" for t, v in soak.rss_samples)
        )
    if meta.get("rss"):
        details.append(f"- Bullpen RSS: {meta['rss']}")
    if meta.get("server_log"):
        details.append(f"- Bullpen server log: {meta['server_log']}")
    lines.append("Per-command change against the baseline (per minute), and notes:")
    lines.extend(details)
    return "\n".join(lines) + "\n", vs
