"""What the live reader costs Redis with no page open, history recording: commands a minute.

Starts a throw-away ``redis-server``, makes ``--queues`` queues with the Node BullMQ peer's
``many-queues`` (tests/interop; ``npm ci`` there first), runs one live reader (``Follower``)
with history on and nobody watching, waits until it has been idle a while (and the seed's jobs
are in history), then counts Redis's commands (INFO commandstats) over ``--seconds`` and prints
them a minute, by command.

    .venv/bin/python bench/live/idle_reader_bench.py [--queues 20] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages
from bench.support import start_redis  # noqa: E402

PEER = ROOT / "tests" / "interop" / "peer.mjs"
# The reader counts as idle once no page has watched anything for 30 s (Watching); the jobs
# the seed finished are written to history when their minute closes: both are over by then.
WARM_UP = 100.0


def setup_django(url: str) -> None:
    from django.conf import settings

    settings.configure(
        SECRET_KEY="bench",  # noqa: S106 - a throw-away process
        INSTALLED_APPS=["queues"],
        USE_TZ=True,
        BULLPEN={"REDIS_URL": url, "HISTORY_RECORDING": True},
    )
    import django

    django.setup()


async def measure(url: str, seconds: float) -> dict[str, int]:
    import redis

    from queues.cancelling import cancel_and_wait
    from queues.live.follower import Follower, LiveSettings
    from queues.live.interest import Interest
    from queues.live.protocol import LiveMessage, Topic

    async def nowhere(topic: Topic, message: LiveMessage) -> None:
        pass

    client = redis.Redis.from_url(url, decode_responses=True)
    follower = Follower(nowhere, Interest(), LiveSettings())
    running = asyncio.ensure_future(follower.run())
    try:
        await asyncio.sleep(WARM_UP)
        client.config_resetstat()
        await asyncio.sleep(seconds)
        stats = client.info("commandstats")
    finally:
        await cancel_and_wait(running)
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queues", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_redis(Path(tmp))
        try:
            seed = ["node", str(PEER), "many-queues", "--redis", url, "--count", str(args.queues)]
            subprocess.run(seed, check=True, capture_output=True, timeout=600)
            setup_django(url)
            calls = asyncio.run(measure(url, args.seconds))
        finally:
            proc.terminate()
    per_minute = 60 / args.seconds
    total = sum(calls.values())
    figure = f"{total * per_minute:.0f} commands a minute"
    print(f"{args.queues} queues, no page open, history on: {figure}")
    for name, n in sorted(calls.items(), key=lambda item: -item[1]):
        print(f"  {name}: {n * per_minute:.0f}")


if __name__ == "__main__":
    main()
