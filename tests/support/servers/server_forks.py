"""Servers and workers forked from a process that has already imported what all of them import.

A browser test's server started as ``python -m daphne`` spent about 1.2 s of CPU importing
Django, Twisted, Channels, redis-py and BullMQ before it listened (0.5 s forked), and the suite
starts about a hundred, and some twenty ``manage.py runqueueworker``. Here each test process
keeps one fork server (multiprocessing's ``forkserver``) that imported those libraries once,
and every server or worker is a fork of it that then runs daphne's own command line or
``manage.py``, as the real commands do, with the test's environment. Of Bullpen only the
``queues`` modules that read neither the environment nor the settings when imported are
preloaded (``fork_preload``; 0.6 -> 0.2 CPU-seconds of imports left to a fork); the settings
are not read before the fork: each server sets itself up from its environment. Daphne itself
is not preloaded: importing it installs Twisted's reactor on an event loop that every fork
would share.

:class:`ForkedProcess` answers as ``subprocess.Popen`` does where the tests use it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import subprocess
import sys
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

# What every server imports that reads neither the environment nor Django's settings.
PRELOAD = [
    "django",
    "django.core.handlers.asgi",
    "django.db.models",
    "django.template",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.test",
    "twisted.internet.asyncioreactor",
    "twisted.web.http",
    "autobahn.twisted.websocket",
    "channels",
    "channels.generic.websocket",
    "redis.asyncio",
    "bullmq",
    "whitenoise",
    "django_htmx",
    "prometheus_client",
    # Last: it checks that nothing above read Django's settings.
    "tests.support.servers.fork_preload",
]

_context: ForkServerContext | None = None


def _fork_server() -> ForkServerContext:
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _context = context
    return _context


def _become(env: dict[str, str], cwd: str, log: str) -> None:
    """In the fork: the environment, folder and output of the command it replaces."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for path in reversed([cwd, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]):
        if path not in sys.path:
            sys.path.insert(0, path)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    # The fork server ignores SIGINT for itself; the command stops on it as it would.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def _finish() -> None:
    # A forked child skips the interpreter's exit: run what the command registered for it.
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()


def _serve(argv: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """``python -m daphne <argv>``."""
    _become(env, cwd, log)
    from daphne.cli import CommandLineInterface

    try:
        CommandLineInterface().run(argv)
    finally:
        _finish()


def _manage(argv: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """``python manage.py <argv>`` (its exit code through ``SystemExit``, as there)."""
    _become(env, cwd, log)
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(["manage.py", *argv])
    finally:
        _finish()


class ForkedProcess:
    """A forked server, with the parts of ``subprocess.Popen`` the tests use."""

    def __init__(self, process: Any) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return int(self._process.pid)

    @property
    def returncode(self) -> int | None:
        code = self._process.exitcode
        return None if code is None else int(code)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired("forked process", timeout or 0)
        return int(self._process.exitcode)

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _fork(target: Any, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess:
    process = _fork_server().Process(
        # Daemonic: a process a failed test left running ends with its test process.
        target=target,
        args=(argv, env, str(cwd), str(log)),
        daemon=True,
    )
    process.start()
    return ForkedProcess(process)


def fork_daphne(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess:
    """Start ``python -m daphne <argv>`` as a fork of the test process's fork server."""
    return _fork(_serve, argv, env, cwd, log)


def fork_manage(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess:
    """Start ``python manage.py <argv>`` as a fork of the test process's fork server."""
    return _fork(_manage, argv, env, cwd, log)
