#!/usr/bin/env python3
"""Live-update benchmark: Bullpen's websockets vs Bull Board's polling, under steady BullMQ load.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/live/live_bench.py --quick            # about 5 minutes
    ./.venv/bin/python bench/live/live_bench.py                    # about 15 minutes
    ./.venv/bin/python bench/live/live_bench.py --soak-minutes 10  # + a 10-minute soak

Steps: start a throw-away ``redis-server``; create ``bench-00`` .. ``bench-19``; start Bullpen
(``./run serve``) and Bull Board (``bench/node/bullboard.mjs``) on it; start the Node load
generator (``bench/node/live_load.mjs``: ~200 jobs/s, each through four ``updateProgress``
calls, most on ``bench-00``). Then, one window after the other:

* baseline (twice): the load alone, Bullpen idle (no page ever opened), Bull Board not polled;
* Bull Board with 1 and 10 tabs, each polling ``GET /api/queues?page=1&jobsPerPage=10`` every 5 s;
* Bullpen with N websocket viewers for each N (1, 10, 100, 500), half on the overview, half on
  the ``bench-00`` queue page;
* Bullpen with 0 viewers after that (its follower keeps running once started);
* optionally a soak: 100 viewers for ``--soak-minutes``, RSS sampled every 30 s.

For every window: Redis commands per minute (``INFO commandstats``) and the increase over the
baseline (per job the load generator completed, see bench/README.md), Redis and server CPU,
the server's RSS, event-to-client latency percentiles and messages per viewer per second.
Prints a Markdown report (also written to ``bench/out/``) and stops every process it started.
Every connection goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCH_DIR))

for _package in ("orjson", "redis", "websockets"):
    if importlib.util.find_spec(_package) is None:  # pragma: no cover - the project venv has them
        sys.exit(f"live_bench.py needs {_package!r}: run it with ./.venv/bin/python")

# bench/live/ (this script's folder) and bench/ are on sys.path only from here on.
from live_procs import raise_fd_limit, server_log_name  # noqa: E402
from live_run import run  # noqa: E402
from live_settings import (  # noqa: E402
    DEFAULT_BULLPEN_CMD,
    DEFAULT_MIX,
    OUT_DIR,
    QUEUE_PAGE,
    VIEWERS_PER_PROCESS,
    log,
)
from live_viewer_set import VIEWER_IMPLS  # noqa: E402
from servers import Processes  # noqa: E402


def parse_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="15 s windows, shorter settles")
    ap.add_argument(
        "--viewers", default="1,10,100,500", help="viewer counts (default 1,10,100,500)"
    )
    ap.add_argument(
        "--viewers-per-process",
        type=int,
        default=VIEWERS_PER_PROCESS,
        help=f"viewers per client process (default {VIEWERS_PER_PROCESS})",
    )
    ap.add_argument(
        "--viewer-impl",
        choices=VIEWER_IMPLS,
        default="python",
        help="viewer client processes: Python websockets (default) or Node's WebSocket client "
        "(bench/node/live_viewers.mjs, the same messages and latency at less CPU)",
    )
    ap.add_argument("--window", type=float, help="seconds per measurement window (default 60)")
    ap.add_argument("--settle", type=float, help="seconds after opening viewers (default 10)")
    ap.add_argument("--warmup", type=float, help="seconds of load before the first window")
    ap.add_argument(
        "--queue-share",
        type=float,
        default=0.5,
        help=f"share of viewers on the {QUEUE_PAGE} queue page, the rest on the overview "
        "(default 0.5; a single viewer is on the queue page)",
    )
    ap.add_argument("--bullboard-tabs", default="1,10", help="Bull Board tab counts (default 1,10)")
    ap.add_argument("--baselines", type=int, default=2, help="baseline windows (default 2)")
    ap.add_argument(
        "--poll-samples", type=int, default=50, help="Bull Board polls for its cost per poll"
    )
    ap.add_argument("--no-idle-window", dest="idle_window", action="store_false")
    ap.add_argument("--soak-minutes", type=float, default=0.0, help="soak length (default: none)")
    ap.add_argument("--soak-viewers", type=int, default=100)
    ap.add_argument("--soak-sample", type=float, default=30.0, help="RSS every S s in the soak")
    ap.add_argument("--rate", type=float, default=200.0, help="jobs per second (default 200)")
    ap.add_argument("--mix", default=DEFAULT_MIX, help=f"queue:weight list (default {DEFAULT_MIX})")
    ap.add_argument("--steps", type=int, default=4, help="updateProgress calls per job")
    ap.add_argument("--step-ms", type=float, default=25.0, help="sleep before each progress step")
    ap.add_argument("--prefix", default="bull")
    ap.add_argument(
        "--interest-key",
        default="bullpen:live:interest",
        help="Bullpen's live interest hash, checked after the viewers close",
    )
    ap.add_argument(
        "--bullpen-cmd",
        default=DEFAULT_BULLPEN_CMD,
        help="shell command starting Bullpen in the repository root with REDIS_URL, "
        "BULLMQ_PREFIX, HOST and PORT set (default ./run serve)",
    )
    ap.add_argument(
        "--bullpen-processes",
        type=int,
        default=1,
        help="Bullpen server processes, each on its own port, viewers spread over them in turn; "
        "more than one share a throw-away Redis as their channel layer (CHANNEL_LAYER_URL)",
    )
    ap.add_argument("--redis-ports", default="6700-6799")
    ap.add_argument("--http-ports", default="8700-8799")
    ap.add_argument("--startup-timeout", type=float, default=120.0)
    ap.add_argument("--fail-on-miss", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--out", type=Path, help="report path (default bench/out/live-<time>.md)")
    args = ap.parse_args(argv)

    args.viewers = parse_list(args.viewers)
    args.bullboard_tabs = parse_list(args.bullboard_tabs)
    if args.window is None:
        args.window = 15.0 if args.quick else 60.0
    if args.settle is None:
        args.settle = 5.0 if args.quick else 10.0
    if args.warmup is None:
        args.warmup = 10.0 if args.quick else 20.0
    if any(n < 1 for n in args.viewers) or any(t < 1 for t in args.bullboard_tabs):
        sys.exit("--viewers and --bullboard-tabs take positive counts")
    if args.bullpen_processes < 1:
        sys.exit("--bullpen-processes takes a positive count")
    if args.window < 5 or args.baselines < 1:
        sys.exit("--window must be ≥ 5 s and --baselines ≥ 1")

    for tool in ("node", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")
    most = max([*args.viewers, args.soak_viewers if args.soak_minutes > 0 else 0])
    fd_limit = raise_fd_limit(most + 512)

    procs = Processes()
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-live-"))
    OUT_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def on_signal(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return run(args, procs, tmp, stamp, fd_limit)
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        procs.stop_all()
        names = [f"{server_log_name(i)}.log" for i in range(args.bullpen_processes)]
        for name in (*names, "bullboard.log", "live_load.log", "redis.log", "layer-redis.log"):
            src = tmp / name
            if src.exists():
                with contextlib.suppress(OSError):
                    shutil.copy(src, OUT_DIR / f"live-{stamp}-{name}")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
