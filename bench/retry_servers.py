"""The retry-all benchmark's processes: its Redis, the failed jobs seeded through
node/seed_failed.mjs, and both servers, Bull Board with actions allowed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from retry_memory import server_pid
from retry_request import (
    PASSWORD,
    QUEUES,
    READY_PATHS,
    SERVER_TITLES,
    USERNAME,
    auth_headers,
)
from servers import NODE_DIR, REPO_DIR, Popen, Processes, log, start_redis_server, wait_http

# bench/node/bullboard.mjs mounts its queues read-only, and Bull Board refuses
# every action on a read-only queue (405), so the retry-all run gets its own
# small server: the same packages and mounting, actions allowed (Bull Board's
# defaults: readOnlyMode false, allowRetries true). Run with `node
# --input-type=module -e` in bench/node, so the imports resolve there.
BULLBOARD_RW_SCRIPT = r"""
import express from 'express';
import { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';

const cfg = JSON.parse(process.env.BULLPEN_BENCH_BOARD);
const connection = { url: cfg.redis, maxRetriesPerRequest: null };
const queues = cfg.queues.map((name) => new Queue(name, { connection, prefix: cfg.prefix }));
await Promise.all(queues.map((q) => q.waitUntilReady()));

const serverAdapter = new ExpressAdapter();
serverAdapter.setBasePath('/');
createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter });

const app = express();
app.disable('x-powered-by');
app.use('/', serverAdapter.getRouter());
const server = app.listen(cfg.port, '127.0.0.1', () => {
  process.stderr.write(`bull board (read-write) on http://127.0.0.1:${cfg.port}/\n`);
});
server.on('error', (err) => {
  process.stderr.write(`bull board: ${err.message}\n`);
  process.exit(1);
});
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  await Promise.allSettled(queues.map((q) => q.close()));
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
"""


def start_redis(procs: Processes, port: int, tmp: Path) -> str:
    log(f"starting redis-server on port {port}")
    start_redis_server(procs, port, tmp, tmp / "redis.log")
    return f"redis://127.0.0.1:{port}/0"


def seed(redis_url: str, prefix: str, queue: str, count: int, timeout: float) -> dict[str, Any]:
    cmd = [
        "node",
        str(NODE_DIR / "seed_failed.mjs"),
        "--redis",
        redis_url,
        "--prefix",
        prefix,
        "--queue",
        queue,
        "--count",
        str(count),
        "--timeout",
        str(int(timeout)),
    ]
    log("seeding: " + " ".join(shlex.quote(c) for c in cmd))
    try:
        done = subprocess.run(
            cmd, cwd=NODE_DIR, stdout=subprocess.PIPE, text=True, timeout=timeout + 30
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"seeding {queue} did not finish in {timeout:.0f} s")
    if done.returncode != 0:
        sys.exit(f"seeding {queue} failed (exit {done.returncode}):\n{done.stdout}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def start_server(
    server: str,
    procs: Processes,
    port: int,
    redis_url: str,
    prefix: str,
    tmp: Path,
    startup_timeout: float,
) -> tuple[Popen, int]:
    log_path = tmp / f"{server}.log"
    if server == "bullboard":
        env = dict(os.environ)
        env["BULLPEN_BENCH_BOARD"] = json.dumps(
            {"redis": redis_url, "prefix": prefix, "port": port, "queues": list(QUEUES.values())}
        )
        proc = procs.start(
            "bull board",
            ["node", "--input-type=module", "-e", BULLBOARD_RW_SCRIPT],
            cwd=NODE_DIR,
            env=env,
            log_path=log_path,
        )
        needle = "node"
    else:
        if not (REPO_DIR / "run").exists():
            sys.exit("./run not found: Bullpen cannot be started")
        env = dict(os.environ)
        env.update(
            REDIS_URL=redis_url,
            BULLMQ_PREFIX=prefix,
            HOST="127.0.0.1",
            PORT=str(port),
            DASHBOARD_USERNAME=USERNAME,
            DASHBOARD_PASSWORD=PASSWORD,
        )
        proc = procs.start("bullpen", ["./run", "serve"], cwd=REPO_DIR, env=env, log_path=log_path)
        needle = "daphne"
    log(f"waiting for {SERVER_TITLES[server]} on port {port}")
    # Bullpen is started with a sign-in: its readiness is asked with it, as every request is.
    wait_http(
        port,
        READY_PATHS[server],
        proc,
        SERVER_TITLES[server],
        startup_timeout,
        log_path,
        headers=auth_headers(server),
    )
    pid = server_pid(proc, needle)
    log(f"{SERVER_TITLES[server]} is pid {pid}")
    return proc, pid
