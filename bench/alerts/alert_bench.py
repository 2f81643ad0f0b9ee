#!/usr/bin/env python3
"""Alert rules at many queues: what one evaluation pass of every rule costs, beside what
loading the overview costs, in Redis commands and server time.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/alerts/alert_bench.py                  # 2,000 queues, ~3 minutes
    ./.venv/bin/python bench/alerts/alert_bench.py --queues 500 --redis redis://127.0.0.1:6390/0

Steps: start a throw-away ``redis-server`` on a free port (or use ``--redis``, seeded already),
seed it with that many small tenant queues through Node BullMQ (``bench/node/seed_many.mjs``,
as bench/manyqueues/ does; its ``node_modules`` from ``bench/node`` or, when that has none,
``tests/interop``), then record two hours of history (minutes, in history's own format, 5 job
names, 12 jobs a minute a name) for one queue in ``--history-every``. Then, in this process,
with the standalone site's settings (bullpen_site/settings.py: reads open, every alert rule on
through ``ALERT_THRESHOLDS``, history recording off so that no reader runs beside):

* the overview: ``GET /queues/`` and ``GET /queues/api/queues/`` through Django's async test
  client, the first of each (the queues discovered) left out;
* one evaluation pass of the alert sender (``queues.alerts.watch.AlertWatch.evaluate``: every
  queue's counts of the five states the rules read, the count rules, the history,
  oldest-waiting, worker and scheduler rules,
  silences, the state kept in Redis), its notices handed to a deliverer that drops them; the
  first pass (which finds every alert new, and decodes every minute read) shown apart;
* the same pass as the first of a new minute: the history rules' decisions kept from the
  pass before (queues/alerts/decided.py, reused within a minute) forgotten first, the newest
  minute each recorded queue keeps (queues/alerts/minutes.py) dropped, as if it had just been
  written, and each window's last judgement (rules.py) set back to the window a minute
  before: each queue reads that minute and the open one and works its window's values out
  again, moved on by a minute (with a tree that keeps no minutes, every recorded queue's
  minutes are read again; decoded texts are still kept). These steps are not measured;
* the same pass cold, as in a process that just took the alert lease over: the decisions and
  the minutes kept forgotten (decoded texts still kept, as in a process that served pages).

``--live`` runs the live reader in this process with an overview watched, as while a page is
open, and waits until it keeps every queue's counts: the views then take its counts, and the
passes too (as the alert sender does where it runs, beside the reader holding the lease), and
keep each queue's oldest waiting job while the reader saw no event of it.

``--decisions PATH`` writes every alert and undecided rule of the queues (the count rules and
the new ones, workers left out: that rule counts seconds of this process) at the moment 90 s
after the recorded queues' newest minute, read cold, warm and after a new minute (they must
be the same; the bench stops if not), as JSON: run a tree before and after on the same
seeded Redis (``--keep-history`` on the second run, so that both read the same minutes) and
compare the files.

Printed: the median over ``--repeats`` of this process's CPU time and wall time (ms), and the
Redis commands (``INFO commandstats``, less the bench's own INFO) of each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "bench" / "node"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "history"))

from columns_bench import write_two_hours  # noqa: E402 - bench/history is on sys.path only from here on
from history_bench import commandstats, start_redis  # noqa: E402

THRESHOLDS = (
    "failure_rate_percent=10 run_p95_ms=2000 wait_p95_ms=60000 oldest_waiting_seconds=3600"
    " no_workers_seconds=300 stalled_last_hour=10 scheduler_overdue_seconds=600"
)


def seed(url: str, queues: int, tmp: Path) -> list[str]:
    """The queues' names, seeded by Node BullMQ."""
    modules = NODE_DIR / "node_modules"
    if not (modules / "bullmq").exists():
        modules = ROOT / "tests" / "interop" / "node_modules"
    # The script finds its packages next to it: a copy beside a link to them.
    (tmp / "node_modules").symlink_to(modules)
    shutil.copy(NODE_DIR / "seed_many.mjs", tmp / "seed_many.mjs")
    names = tmp / "names.txt"
    argv = ["node", str(tmp / "seed_many.mjs"), "--redis", url, "--queues", str(queues)]
    subprocess.run([*argv, "--names-out", str(names)], check=True, stdout=subprocess.DEVNULL)
    return names.read_text().split()


def record_history(url: str, names: list[str]) -> None:
    """Two hours of minutes of each named queue, as the recorder leaves them."""
    from queues.reads.keys import QueueRef

    write_two_hours(url, [QueueRef("bull", name) for name in names], seed=4, mark_recorded=True)


def setup_django(url: str, tmp: Path) -> None:
    os.environ.update(
        REDIS_URL=url,
        BULLPEN_DB=str(tmp / "bullpen.sqlite3"),
        SECRET_KEY="bench",  # noqa: S106 - a throw-away process
        ALLOWED_HOSTS="testserver",
        ALERT_THRESHOLDS=THRESHOLDS,
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "bullpen_site.settings"
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    settings.BULLPEN = {**settings.BULLPEN, "HISTORY_RECORDING": False}
    # Static files' names as they are (./run serve collects them with their hashes first).
    plain = "django.contrib.staticfiles.storage.StaticFilesStorage"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": plain}}
    from queues.config.settings import get_config

    get_config.cache_clear()
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # migrate, once, before any request
    call_command("migrate", verbosity=0)
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


async def measure(
    url: str,
    work: Callable[[], Awaitable[Any]],
    repeats: int,
    setup: Callable[[], None] | None = None,
) -> tuple[float, float, float, float]:
    """The first run's CPU ms, then the median CPU ms, wall ms and Redis commands of the
    others (``setup`` run before each, not measured)."""
    import redis

    sync = redis.Redis.from_url(url, decode_responses=True)
    cpus, walls, commands = [], [], []
    for _ in range(repeats + 1):
        if setup is not None:
            setup()
        before = commandstats(sync)
        cpu, wall = time.process_time(), time.perf_counter()
        await work()
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
        after = commandstats(sync)
        commands.append(sum(after[k] - before.get(k, 0) for k in after if k != "info"))
    first = cpus.pop(0)
    walls.pop(0)
    commands.pop(0)
    return first, statistics.median(cpus), statistics.median(walls), statistics.median(commands)


async def write_decisions(
    url: str, recorded: list[str], path: str, new_minute: Callable[[], None]
) -> None:
    """Every alert and undecided rule at 90 s after the newest recorded minute, read cold,
    warm and after a new minute (the same, or the bench stops), written to ``path``."""
    import json

    import redis

    from queues.alerts import decided
    from queues.alerts.rules import read_rules
    from queues.alerts.thresholds import COUNTED, read_alerts, thresholds
    from queues.history.storage import last_key
    from queues.reads.counts import summaries
    from queues.reads.keys import QueueRef

    sync = redis.Redis.from_url(url, decode_responses=True)
    at = int(sync.get(last_key(QueueRef("bull", recorded[0])))) + 90_000

    async def decide() -> list[Any]:
        found = await summaries(states=COUNTED)
        limits = {s.ref: thresholds(s.ref.slug) for s in found}
        firing = await read_alerts(found, limits)
        more = await read_rules(found, at, workers=False, limits=limits)
        rows: list[Any] = []
        for ref, alerts in [*firing.items(), *more.alerts.items()]:
            rows += [[ref.slug, a.as_json()] for a in alerts]
        rows += [
            [ref.slug, rule, "undecided"] for ref, rules in more.undecided.items() for rule in rules
        ]
        return sorted(rows, key=str)

    try:
        from queues.alerts import minutes
    except ImportError:
        minutes = None
    decided._decided.clear()
    if minutes is not None:
        minutes.forget()
    cold = await decide()
    warm = await decide()
    new_minute()
    after = await decide()
    assert cold == warm == after, "the kept minutes decided otherwise"
    await asyncio.to_thread(Path(path).write_text, json.dumps(cold, indent=0))
    print(f"decisions at {at}: {len(cold)} entries, the same cold, warm and after a new minute")


async def start_live_reader() -> Callable[[], Any]:
    """Run the live reader in this process with an overview watched, as while a page is open,
    until it keeps every queue's counts; the known-counts factory the alert sender then gets
    (the overview's views take the reader's counts by themselves)."""
    from dashboard.live import channel_groups
    from dashboard.live.reader_counts import ReaderCounts
    from queues.reads.discovery import discovered

    channel_groups.interest().watch_overview()
    follower = channel_groups.ensure_started()
    refs = list((await discovered()).queues)
    for _ in range(1200):
        known, version = follower.known_summaries(refs)
        if version is not None and len(known) == len(refs):
            print(f"the live reader keeps {len(known)} queues' counts", flush=True)
            return ReaderCounts
        await asyncio.sleep(0.1)
    raise SystemExit("the live reader did not come to know every queue within 120 s")


async def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="alert-bench-"))
    proc = None
    try:
        if args.redis:
            url = args.redis
            import redis

            names = sorted(
                key.split(":")[1]
                for key in redis.Redis.from_url(url, decode_responses=True).scan_iter(
                    "bull:*:meta", count=5000
                )
            )
        else:
            proc, url = start_redis(tmp)
            started = time.monotonic()
            names = seed(url, args.queues, tmp)
            print(f"seeded {len(names)} queues in {time.monotonic() - started:.0f} s", flush=True)
        setup_django(url, tmp)
        recorded = names[:: args.history_every]
        if not args.keep_history:
            record_history(url, recorded)
        from django.test import AsyncClient

        from queues.alerts import decided, rules
        from queues.alerts.watch import AlertWatch, DeliverySettings

        try:
            from queues.alerts import minutes
        except ImportError:  # a tree that keeps no minutes
            minutes = None

        client = AsyncClient()

        async def get(path: str) -> None:
            response = await client.get(path)
            assert response.status_code == 200, (path, response.status_code)

        await get("/queues/")  # discovery: every queue found
        await get("/queues/api/queues/")

        async def nowhere(notice: Any, targets: frozenset[str], later: bool) -> frozenset[str]:
            return frozenset()

        known_counts = None
        if args.live:
            known_counts = await start_live_reader()
        watch = AlertWatch(nowhere, lambda: True, known_counts=known_counts)
        delivery = DeliverySettings(webhooks=("http://127.0.0.1:9/bench",))
        notices: list[int] = []

        async def one_pass() -> None:
            notices.append(len(await watch.evaluate(delivery)))

        def new_minute() -> None:
            decided._decided.clear()
            if minutes is not None:
                for kept in minutes.KEPT._queues.values():
                    if kept.records:
                        kept.records.pop(max(kept.records))
            # Each window as it was a minute before (its oldest record once more, its newest
            # not yet): the pass moves every window on by a minute, as a new minute does.
            from queues.history.packed import added

            for ref, entry in list(rules._judged.items()):
                records = entry[0]
                if records:
                    before = [records[0], *records[:-1]]
                    rest = (added(before),) if len(entry) == 4 else ()
                    rules._judged[ref] = (before, entry[1], entry[2], *rest)

        def cold() -> None:
            decided._decided.clear()
            if minutes is not None:
                minutes.forget()

        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load = os.getloadavg()[0]
        live = ", the live reader running and an overview watched" if args.live else ""
        print(
            f"# Alert rules at {len(names)} queues, history on {len(recorded)}{live}"
            f" ({when}, load average {load:.1f}, median of {args.repeats})\n"
        )
        print("| work | first run's CPU ms | CPU ms | wall ms | Redis commands |")
        print("| --- | --- | --- | --- | --- |")
        works: list[tuple[str, Callable[[], Awaitable[Any]], Callable[[], None] | None]] = [
            ("GET /queues/", lambda: get("/queues/"), None),
            ("GET /queues/api/queues/", lambda: get("/queues/api/queues/"), None),
            ("one evaluation pass, every rule", one_pass, None),
            ("the same, the first of a minute", one_pass, new_minute),
            ("the same, cold (the lease just taken over)", one_pass, cold),
        ]
        for label, work, setup in works:
            first, cpu, wall, commands = await measure(url, work, args.repeats, setup)
            print(f"| {label} | {first:.0f} | {cpu:.0f} | {wall:.0f} | {commands:.0f} |")
        if minutes is not None:
            await one_pass()
            used = minutes.KEPT.used
            print(f"\nminutes kept: {len(minutes.KEPT)} queues, about {used / 1e6:.2f} MB")
        if args.decisions:
            await write_decisions(url, recorded, args.decisions, new_minute)
        print(f"\nnotices started per pass: {notices}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        if args.live:
            from dashboard.live import channel_groups

            await channel_groups.stop()
        from queues.redis.clients import close_current

        await close_current()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--queues", type=int, default=2000)
    parser.add_argument("--history-every", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--redis", help="a Redis already seeded (bull prefix): no seeding")
    parser.add_argument("--keep-history", action="store_true", help="the minutes already there")
    parser.add_argument("--decisions", help="write every alert and undecided rule here (JSON)")
    parser.add_argument(
        "--live",
        action="store_true",
        help="the live reader running with an overview watched: views and passes take its counts",
    )
    asyncio.run(main(parser.parse_args()))
