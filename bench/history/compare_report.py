"""The truth of bullboard_compare.py's jobs and its Markdown report."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

QS = (("p50", 0.5, "50"), ("p95", 0.95, "95"), ("p99", 0.99, "99"))


def exact(values: Sequence[int], q: float) -> float | None:
    """The value at rank q * (n - 1), the lower one (what Bullpen's sketch estimates, and
    its tests' truth)."""
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[math.floor(q * (len(ordered) - 1))])


@dataclass
class Truth:
    completed: int = 0
    failed: int = 0
    waits: list[int] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    names: dict[str, Truth] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        return self.completed + self.failed

    def add(self, name: str, state: str, wait: int, run: int, *, top: bool = True) -> None:
        if state == "completed":
            self.completed += 1
        else:
            self.failed += 1
        self.waits.append(wait)
        self.runs.append(run)
        if top:
            self.names.setdefault(name, Truth()).add(name, state, wait, run, top=False)


def error(estimate: float | None, true: float | None) -> str:
    if estimate is None or true is None:
        return "—"
    if true == 0:
        return "exact" if estimate == 0 else f"{estimate:+.0f} ms"
    relative = (estimate - true) / true
    return "exact" if relative == 0 else f"{100 * relative:+.1f} %"


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def board_counts(board: dict[str, Any]) -> tuple[int, int]:
    history = board["history"]
    return (
        sum(int(p["value"]) for p in history["completed"]),
        sum(int(p["value"]) for p in history["failed"]),
    )


def board_latency(board: dict[str, Any], metric: str) -> tuple[int, dict[str, float]]:
    points = board["latency"][metric]["range"]
    if not points:
        return 0, {}
    return int(points[0]["count"]), {k: float(v) for k, v in points[0]["values"].items()}


def _counts(found: dict[str, Any]) -> list[str]:
    rows = []
    for phase, index in (("A", 0), ("B", 1)):
        true = found["truth"][index]
        totals = found["bullpen"][index][0].totals
        completed, failed = board_counts(found["board"][index])
        for label, t, bp, bb in (
            ("completed", true.completed, totals.completed, completed),
            ("failed", true.failed, totals.failed, failed),
        ):
            rows.append(
                f"| {label} ({phase}) | {t:,} | {bp:,} | {bp - t:+,} | {bb:,} | {bb - t:+,} |"
            )
    return rows


def _percentiles(found: dict[str, Any]) -> list[str]:
    true = found["truth"][0]
    totals = found["bullpen"][0][0].totals
    rows = []
    for metric, values, ours, theirs in (
        ("wait", true.waits, totals.wait_ms, "waittime"),
        ("run", true.runs, totals.run_ms, "runtime"),
    ):
        sampled, board = board_latency(found["board"][0], theirs)
        for label, q, key in QS:
            t = exact(values, q)
            bp = getattr(ours, label)
            bb = board.get(key)
            rows.append(
                f"| {metric} {label} (ms) | {ms(t)} | {ms(bp)} | {error(bp, t)} "
                f"| {ms(bb)} | {error(bb, t)} |"
            )
        rows.append(
            f"| {metric}: durations counted | {len(values):,} | (every job) | | {sampled:,} | "
            f"{sampled - len(values):+,} |"
        )
    return rows


def _names(found: dict[str, Any]) -> list[str]:
    true = found["truth"][0]
    names = {row.name: row for row in found["bullpen"][0][1].names}
    rows = []
    for name, t in sorted(true.names.items()):
        row = names.get(name)
        if row is None:
            rows.append(f"| {name} | {t.completed:,} / {t.failed:,} | missing | | | |")
            continue
        run_true, wait_true = exact(t.runs, 0.95), exact(t.waits, 0.95)
        rows.append(
            f"| {name} | {t.completed:,} / {t.failed:,} | {row.completed:,} / {row.failed:,} "
            f"| {ms(run_true)} / {ms(row.run_ms.p95)} ({error(row.run_ms.p95, run_true)}) "
            f"| {ms(wait_true)} / {ms(row.wait_ms.p95)} ({error(row.wait_ms.p95, wait_true)}) "
            f"| {len(row.slowest)} |"
        )
    return rows


def _oldest(found: dict[str, Any]) -> list[str]:
    oldest = found["oldest"]
    series = found["bullpen"][1][0]
    ages = found["board"][1]["history"]["queueage"]
    board = int(ages[-1]["value"]) if ages else None
    tick = oldest["tick"]
    return [
        f"| true age when read | {ms(oldest['true'])} | {ms(series.oldest_waiting_ms)} "
        f"| {error(series.oldest_waiting_ms, oldest['true'])} |",
        "| Bull Board's hour point, the most a tick saw "
        f"(last tick {tick['ended'] - tick['started']} ms long) "
        f"| {ms(oldest['at_tick'])} at the tick's start | {ms(board)} "
        f"| {error(board, oldest['at_tick'])} |",
    ]


PARTIES = (
    ("bullpen", "Bullpen's reader (history on, nobody watching)"),
    ("bullboard", "Bull Board's recorder (its connection and its Queue's)"),
    ("load metrics", "BullMQ's native metrics, in the workers' scripts"),
)


def _commands(found: dict[str, Any]) -> list[str]:
    tally, marks = found["tally"], found["marks"]
    jobs = found["truth"][0].finished
    start, end = marks["recording"]
    rows = []
    for party, label in PARTIES:
        rec = tally["recording"]
        sent, total = rec.total(party, lua=False), rec.total(party)
        idle = "—"
        if "idle" in tally:
            i_start, i_end = marks["idle"]
            idle = f"{tally['idle'].total(party) * 60 / (i_end - i_start):,.0f}"
        rows.append(
            f"| {label} | {sent:,} | {total - sent:,} | {total / jobs:.2f} | "
            f"{total * 60 / (end - start):,.0f} | {idle} |"
        )
    return rows


def _by_command(found: dict[str, Any]) -> list[str]:
    rec = found["tally"]["recording"]
    out = []
    for party, label in PARTIES:
        top = rec.by_command(party).most_common(8)
        listed = ", ".join(f"{command} {n:,}" for command, n in top)
        out.append(f"- {label}: {listed or 'none'}")
    return out


def _memory(found: dict[str, Any], key: str = "memory") -> list[str]:
    labels = {
        "bullpen": "Bullpen, the queue's history",
        "bullboard": "Bull Board, the queue's metrics",
        "bullboard global": "Bull Board, its cross-queue roll-up (`__global__`)",
        "bullmq metrics": "BullMQ's metrics lists (Bull Board's input)",
    }
    return [
        f"| {labels[name]} | {keys:,} | {size:,} |" for name, (keys, size) in found[key].items()
    ]


def report(found: dict[str, Any], args: Any) -> str:
    loaded = found["loaded"]
    minutes = (loaded["finishedAt"] - loaded["loadStarted"]) / 60_000
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        f"# Bullpen history and Bull Board metrics, side by side ({when})",
        "",
        f"{os.cpu_count()} cores; 1-minute load average at the start, after the load and at "
        f"the end: {', '.join(f'{x:.2f}' for x in found['load'])}. "
        f"{found['truth'][0].finished:,} jobs in bursts over {minutes:.1f} minutes "
        f"(~{args.rate}/s, every 30 s a burst six times larger), names send/resize/render; "
        "every figure below but the commands a minute is independent of the machine's load.",
        "",
        "## Counts and percentiles against BullMQ's own timestamps",
        "",
        "A: both have recorded every job of the load. B: one more job finished in a later "
        "minute (BullMQ's metrics hand a minute's count over when a job finishes in a later "
        "minute). Truth: every finished job's hash; a percentile is the value at rank "
        "q·(n-1), the lower one.",
        "",
        "| figure | truth | Bullpen | error | Bull Board | error |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *_counts(found),
        *_percentiles(found),
        "",
        "## Per job name (A): Bullpen's names table; Bull Board keeps none",
        "",
        "| name | completed / failed: truth | Bullpen | run p95 ms: truth / Bullpen "
        "| wait p95 ms: truth / Bullpen | slowest jobs listed |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *_names(found),
        "",
        f"## Oldest waiting job (B: {BACKLOG_NOTE})",
        "",
        "| reading | truth (ms) | reported (ms) | error |",
        "| --- | ---: | ---: | ---: |",
        *_oldest(found),
        "",
        "## Redis commands spent recording (the load until both had recorded it)",
        "",
        "| who | commands sent | run by their scripts | per finished job | a minute "
        "| a minute, idle |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *_commands(found),
        "",
        *_by_command(found),
        "",
        "## Memory (`MEMORY USAGE` of every key, after B): Bullpen's `bullpen:hist:bull:cmp:*`, "
        "Bull Board's `bull-board:metrics:cmp:*` and `...:__global__:*`, BullMQ's "
        "`bull:cmp:metrics:*`",
        "",
        "| keys | count | bytes |",
        "| --- | ---: | ---: |",
        *_memory(found),
    ]
    if found.get("steady"):
        lines += [
            "",
            "## Memory of a queue busy every minute for 90 days (each one's default retention)",
            "",
            "60 jobs finished a minute (Bullpen: 5 names of 12; Bull Board: 2 % failed), every "
            "minute of 90 days, written in each one's own format by its own code; the queue's "
            "keys are `...:steady:*` for Bull Board and `bullpen:hist:bull:m0000:*` for "
            "Bullpen. Bull Board: minutes 7 d, hours and days 90 d; Bullpen: minutes 24 h, "
            "hours 30 d, days 90 d (sketches shorter). BullMQ's lists: 2 x 10,080 points.",
            "",
            "| keys | count | bytes |",
            "| --- | ---: | ---: |",
            *_memory(found, "steady"),
        ]
    return "\n".join(lines) + "\n"


BACKLOG_NOTE = "5 jobs added with no worker, read by each"
