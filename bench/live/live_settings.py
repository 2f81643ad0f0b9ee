"""What the live benchmark's modules share: its paths, constants and targets, log line and clock."""

from __future__ import annotations

import sys
import time
from pathlib import Path

LIVE_DIR = Path(__file__).resolve().parent
BENCH_DIR = LIVE_DIR.parent
REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
OUT_DIR = BENCH_DIR / "out"

N_QUEUES = 20
QUEUE_PAGE = "bench-00"
WS_PATH = "/ws/bullpen/"
BULLPEN_READY = "/queues/api/queues/"
BULLBOARD_POLL = "/api/queues?page=1&jobsPerPage=10"
BULLBOARD_INTERVAL = 5.0  # seconds between two polls of one Bull Board tab (its UI default)
DEFAULT_BULLPEN_CMD = "./run serve"
DEFAULT_MIX = "bench-00:70,bench-01:10,bench-02:10,bench-03:10"
HIST_LIMIT_MS = 60_000
# One client process handles this many viewers (see live_viewer_set.ViewerSet).
VIEWERS_PER_PROCESS = 125
# A child's report is one JSON line: histograms and the probe viewer's completed job ids.
CHILD_REPLY_LIMIT = 2**26
# Targets (from the product issue).
SCALE_BOUND = 1.1  # cmds/min with 100 viewers at most 1.1 times those with 1 viewer
LATENCY_P99_MS = 250.0
SOAK_GROWTH = 0.05  # RSS "flat": end ≤ start + 5 % (and at most 10 MiB)
SOAK_GROWTH_MIB = 10.0
TIMES = "\N{MULTIPLICATION SIGN}"
MINUS = "\N{MINUS SIGN}"


def log(msg: str) -> None:
    print(f"[live {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def now_ms() -> float:
    return time.time() * 1000.0
