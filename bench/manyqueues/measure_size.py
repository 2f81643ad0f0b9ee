"""One number of queues measured: Redis emptied and seeded, then each server started and its
overview loaded in Chromium, its JSON route timed and an idle viewer counted."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import time
from pathlib import Path

import redis as redis_py
from page_load import measure, open_page
from playwright.sync_api import Browser
from playwright.sync_api import Error as PlaywrightError
from redis_load import CommandCounter, net_of
from report import TITLES
from results import ApiCall, IdleViewer, ServerResult, SizeResult
from server_processes import log, process_group_rss, start_server, timed_get, wait_ready
from servers import NODE_DIR, Processes, free_port, parse_range, stop_group

# The overview page and the JSON route its UI reads, per server.
PAGES = {"bullpen": "/queues/", "bullboard": "/"}
API_ROUTES = {"bullpen": "/queues/api/queues/", "bullboard": "/api/queues?page=1&jobsPerPage=10"}
API_CALLS = 3
# Bull Board's UI keeps its settings in localStorage; polling off during a measured load, so
# the load's figures hold the page's own requests and not the polls that follow (the idle
# viewer, with the default settings, measures those).
NO_POLLING = {
    "bullboard": (
        "try { localStorage.setItem('board-settings', "
        "JSON.stringify({ state: { pollingInterval: 0 }, version: 2 })); } catch (e) {}"
    ),
    "bullpen": "",
}


def seed(
    args: argparse.Namespace, redis_url: str, queues: int, names_file: Path
) -> dict[str, object]:
    cmd = ["node", str(NODE_DIR / "seed_many.mjs"), "--redis", redis_url, "--prefix", args.prefix]
    cmd += ["--queues", str(queues), "--names-out", str(names_file), "--reset"]
    cmd += ["--procs", str(args.seed_procs)]
    log("seeding: " + " ".join(shlex.quote(c) for c in cmd))
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"seeding failed (exit {done.returncode})")
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def measure_api(
    counter: CommandCounter, port: int, path: str, timeout: float
) -> tuple[list[ApiCall], list[str]]:
    calls = []
    notes = []
    for _ in range(API_CALLS):
        counter.start()
        status, size, ms = timed_get(port, path, timeout)
        window = counter.stop()
        quiet = counter.quiet_window(max(window.seconds, 1.0))
        if status != 200:
            notes.append(f"`GET {path}` answered HTTP {status}")
        calls.append(ApiCall(path, ms, size, net_of(window, quiet).total))
    return calls, notes


def measure_server(
    browser: Browser,
    counter: CommandCounter,
    server: str,
    port: int,
    queues: int,
    args: argparse.Namespace,
) -> ServerResult:
    url = f"http://127.0.0.1:{port}{PAGES[server]}"
    result = ServerResult(server, queues, url)
    title = TITLES[server]

    log(f"{title}: warm-up load of {url}")
    open_page(browser, url, args.load_timeout, args.quiet).close()

    log(f"{title}: the JSON route, {API_CALLS} requests")
    result.api, notes = measure_api(counter, port, API_ROUTES[server], args.load_timeout)
    result.notes.extend(notes)

    for n in range(args.loads):
        counter.start()
        opened = open_page(browser, url, args.load_timeout, args.quiet, NO_POLLING[server])
        window = counter.stop()
        load = measure(opened)
        opened.close()
        time.sleep(1.0)
        commands = net_of(window, counter.quiet_window(window.seconds))
        result.loads.append(load)
        result.view_commands.append(commands)
        log(
            f"{title}: load {n + 1}/{args.loads}: network idle "
            f"{load.network_idle_ms or 0:,.0f} ms, {load.requests} requests, "
            f"{load.total_wire_bytes / 1000:,.0f} KB, {commands.total:,.0f} Redis commands"
        )

    if args.idle_seconds > 0:
        log(f"{title}: idle viewer — {args.idle_seconds:g} s with nobody watching")
        time.sleep(2.0)
        quiet = counter.quiet_window(args.idle_seconds)
        opened = open_page(browser, url, args.load_timeout, args.quiet)
        log(f"{title}: idle viewer — page open; {args.settle:g} s to settle, then the count")
        # Playwright's own wait, not time.sleep: it keeps the page's network events coming.
        opened.page.wait_for_timeout(args.settle * 1000)
        requests_before = len(opened.network.started)
        counter.start()
        opened.page.wait_for_timeout(args.idle_seconds * 1000)
        active = counter.stop()
        requests = len(opened.network.started) - requests_before
        opened.close()
        per_min = 60.0 / active.seconds
        result.idle_viewer = IdleViewer(
            seconds=active.seconds,
            with_viewer_per_min=active.total * per_min,
            quiet_per_min=quiet.total * 60.0 / quiet.seconds,
            requests_per_min=requests * per_min,
            by_command_per_min={
                cmd: n * per_min for cmd, n in net_of(active, quiet).by_command.items()
            },
        )
        log(f"{title}: idle viewer: {result.idle_viewer.net_per_min:,.0f} Redis commands a minute")
    return result


def run_size(
    browser: Browser,
    procs: Processes,
    args: argparse.Namespace,
    redis_url: str,
    servers: list[str],
    queues: int,
    tmp: Path,
    keep_running: bool,
) -> SizeResult:
    client = redis_py.Redis.from_url(redis_url, decode_responses=True)
    client.flushall()
    client.config_resetstat()
    names_file = tmp / f"names-{queues}.txt"
    t0 = time.monotonic()
    summary = seed(args, redis_url, queues, names_file)
    seed_seconds = time.monotonic() - t0
    size = SizeResult(
        queues=queues,
        seed=summary,
        seed_seconds=seed_seconds,
        redis_memory_bytes=int(client.info("memory")["used_memory"]),
        keys=int(client.dbsize()),
    )
    log(f"{queues:,} queues seeded in {seed_seconds:.1f} s ({size.keys:,} keys)")
    counter = CommandCounter(client)
    hlo, hhi = parse_range(args.http_ports)
    for server in servers:
        port = free_port(hlo, hhi)
        log_path = tmp / f"{server}-{queues}.log"
        proc = start_server(procs, server, args, redis_url, names_file, port, log_path)
        log(f"waiting for {TITLES[server]} on port {port}")
        wait_ready(port, API_ROUTES[server], proc, TITLES[server], args.startup_timeout, log_path)
        try:
            result = measure_server(browser, counter, server, port, queues, args)
        except PlaywrightError as error:
            # Bull Board's page crashed Chromium's tab at 10,000 queues: said, not fatal.
            log(f"{TITLES[server]} could not be measured: {error}")
            result = ServerResult(server, queues, PAGES[server])
            result.notes.append(f"the page could not be loaded: {str(error).splitlines()[0]}")
        time.sleep(1.0)
        result.rss_bytes = process_group_rss(proc.pid)
        size.servers[server] = result
        if keep_running:
            log(f"{TITLES[server]} stays up: {result.url}")
        else:
            stop_group(proc, TITLES[server])
    return size
