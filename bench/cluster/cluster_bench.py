"""Bullpen on a 3-master Redis Cluster against one Redis server holding the same data.

Node BullMQ (tests/interop/peer.mjs ``many-queues --hash-tags``) seeds the same tenant queues,
``{t001}-mail``, ``{t001}-billing``, ... on both: on the cluster the hash tags spread them over the
three masters. Bullpen is started against each in turn (daphne, the test settings, reads open),
and the overview and one queue's failed tab are loaded ``--loads`` times after a warm-up.
Printed per page and topology: median and p90 server time, and the Redis commands one view
costs (``INFO commandstats`` summed over every node, the bench's own ``INFO`` taken out).

    ./.venv/bin/python bench/cluster/cluster_bench.py --tenants 500 --loads 30
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import django
import redis as redis_py

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# The servers are started as the tests start theirs (tests/conftest.py), with their settings.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from tests.support.peer import PEER  # noqa: E402
from tests.support.servers.cluster_topology import ClusterTopology  # noqa: E402 - the repository is on sys.path
from tests.support.servers.live_server import start_bullpen, stop_bullpen  # noqa: E402
from tests.support.servers.redis_server import RedisServer  # noqa: E402

PAGES = {"overview": "/queues/", "failed tab": "/queues/q/{t025}-mail/?state=failed"}


def seed(flags: list[str], tenants: int) -> None:
    command = ["node", str(PEER), "many-queues", *flags, "--count", str(tenants), "--hash-tags"]
    command += ["--services", "mail,billing", "--deadline-ms", "600000"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"seeding failed: {done.stderr[-2000:]}")


def calls(clients: list[redis_py.Redis]) -> int:
    total = 0
    for client in clients:
        stats = client.info("commandstats")
        total += sum(int(v["calls"]) for v in stats.values() if isinstance(v, dict))
    return total


def measure(url: str, clients: list[redis_py.Redis], loads: int) -> dict[str, tuple[float, ...]]:
    """Per page: (median ms, p90 ms, Redis commands a view)."""
    found: dict[str, tuple[float, ...]] = {}
    for name, path in PAGES.items():
        for _ in range(3):  # warm-up: discovery, scripts loaded, connections open
            fetch(url + path)
        times = []
        before = calls(clients)
        for _ in range(loads):
            started = time.perf_counter()
            fetch(url + path)
            times.append((time.perf_counter() - started) * 1000)
        # Each INFO is a command too: the ones of this count taken out.
        spent = calls(clients) - before - len(clients)
        times.sort()
        found[name] = (statistics.median(times), times[int(0.9 * (len(times) - 1))], spent / loads)
    return found


def fetch(url: str) -> None:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - a local server
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")
        response.read()


def run_on(
    redis_url: str, clients: list[redis_py.Redis], loads: int, out: Path, name: str
) -> dict[str, tuple[float, ...]]:
    server = start_bullpen(redis_url, out / f"{name}.log", {"BULLPEN_TEST_PREFIX": "bull"})
    try:
        return measure(server.url, clients, loads)
    finally:
        stop_bullpen(server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=500, help="tenants, two queues each")
    parser.add_argument("--loads", type=int, default=30, help="measured loads per page")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bullpen-cluster-bench-"))
    cluster, single = ClusterTopology(), RedisServer()
    results: dict[str, dict[str, tuple[float, ...]]] = {}
    closers: list[Callable[[], None]] = []
    try:
        cluster.start()
        closers.append(cluster.stop)
        single.start()
        closers.append(single.stop)
        seed(["--cluster", cluster.nodes, "--prefix", "bull"], args.tenants)
        seed(["--redis", single.url, "--prefix", "bull"], args.tenants)
        nodes = [redis_py.Redis(port=port) for port in cluster.ports]
        spread = {
            port: int(client.dbsize()) for port, client in zip(cluster.ports, nodes, strict=True)
        }
        print(f"{2 * args.tenants} queues; keys per master: {spread}", file=sys.stderr)
        results["one server"] = run_on(single.url, [single.client()], args.loads, out, "single")
        results["3-master cluster"] = run_on(cluster.url, nodes, args.loads, out, "cluster")
    finally:
        for close in reversed(closers):
            close()
    queues = 2 * args.tenants
    print()
    print(f"{queues} queues, {args.loads} loads a page (median / p90 ms, commands a view)")
    print()
    print("| page | one server | 3-master cluster | cluster / one |")
    print("|---|---:|---:|---:|")
    for page in PAGES:
        one, many = results["one server"][page], results["3-master cluster"][page]
        print(
            f"| {page} | {one[0]:.1f} / {one[1]:.1f} ms, {one[2]:.0f} cmds "
            f"| {many[0]:.1f} / {many[1]:.1f} ms, {many[2]:.0f} cmds | {many[0] / one[0]:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
