"""A real Sentinel setup on one machine: a master, its replica, and one sentinel (quorum 1).

The sentinel calls the master down after 1 s without an answer and promotes the replica, so a
test can shut the master down and see a failover within a few seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.servers.redis_server import free_port

SERVICE = "bullpen-main"


class SentinelTopology:
    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="bullpen-sentinel-"))
        self.master_port = free_port()
        self.replica_port = free_port()
        self.sentinel_port = free_port()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.servers: dict[int, subprocess.Popen[bytes]] = {}  # by port

    @property
    def url(self) -> str:
        """Bullpen's REDIS_URL for the service."""
        return f"redis+sentinel://127.0.0.1:{self.sentinel_port}/{SERVICE}/0"

    @property
    def sentinels(self) -> str:
        """The Node peer's ``--sentinels`` flag."""
        return f"127.0.0.1:{self.sentinel_port}"

    def start(self) -> None:
        self._server(self.master_port)
        self._server(self.replica_port, "--replicaof", "127.0.0.1", str(self.master_port))
        # The sentinel learns of the replica from the master's first INFO when it is in sync
        # by then; otherwise only ten seconds later.
        self._wait(self._replica_in_sync, "the replica in sync")
        conf = self.dir / "sentinel.conf"
        conf.write_text(
            f"port {self.sentinel_port}\n"
            "bind 127.0.0.1\n"
            f"dir {self.dir}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.master_port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
            f"sentinel failover-timeout {SERVICE} 5000\n"
        )
        self._spawn(str(conf), "--sentinel")
        self._wait(self._ready, "the replica in sync and known to the sentinel")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def sentinel(self) -> redis.Redis:
        return redis.Redis(port=self.sentinel_port, decode_responses=True, socket_timeout=2)

    def master_port_now(self) -> int:
        """The port of the master as the sentinel names it now."""
        with self.sentinel() as client:
            _host, port = client.sentinel_get_master_addr_by_name(SERVICE)  # type: ignore[no-untyped-call]
        return int(port)

    def master(self) -> redis.Redis:
        """A direct client of the master of the moment."""
        return redis.Redis(port=self.master_port_now(), decode_responses=True, socket_timeout=2)

    def replicated(self) -> None:
        """Until the replica has every write the master took (``WAIT``): replication is
        asynchronous, and a failover loses what the replica has not yet had. (Just after the
        replica's first sync, the master holds its writes until the replica's first
        acknowledgement, up to a second or more later.)"""
        with self.master() as master:
            if int(master.wait(1, 10_000)) < 1:
                raise RuntimeError("the replica did not acknowledge the master's writes")

    def shut_master_down(self) -> int:
        """``SHUTDOWN NOSAVE`` on the master; returns the port the sentinel will promote."""
        old = self.master_port_now()
        with redis.Redis(port=old, retry=Retry(NoBackoff(), 0)) as client:
            try:
                client.shutdown(nosave=True)
            except redis.ConnectionError:
                pass  # the server closes the connection as it goes
        return self.replica_port if old == self.master_port else self.master_port

    def kill_master(self) -> int:
        """The master's process ends at once (as in a crash); returns the port to be promoted."""
        old = self.master_port_now()
        self.servers[old].kill()
        self.servers[old].wait(10)
        return self.replica_port if old == self.master_port else self.master_port

    def wait_for_master(self, port: int, timeout: float = 15) -> None:
        """Until the sentinel names ``port`` as the master and that server acts as one."""

        def promoted() -> bool:
            if self.master_port_now() != port:
                return False
            with redis.Redis(port=port, decode_responses=True) as client:
                return str(client.info("replication").get("role")) == "master"

        self._wait(promoted, f"the sentinel to promote port {port}", timeout)

    def describe(self) -> str:
        """What each server holds and is, for a failing test's message."""
        said = [f"the sentinel names port {self.master_port_now()}"]
        for port, process in self.servers.items():
            if process.poll() is not None:
                said.append(f"port {port}: ended")
                continue
            try:
                with redis.Redis(port=port, decode_responses=True, socket_timeout=2) as client:
                    role = client.info("replication")
                    clients = [c["addr"] for c in client.client_list()]
                    said.append(
                        f"port {port}: {role.get('role')} (of {role.get('master_port')}, link "
                        f"{role.get('master_link_status')}), {client.dbsize()} keys, run "
                        f"{client.info('server').get('run_id')}, clients {clients}"
                    )
            except redis.RedisError as error:
                said.append(f"port {port}: {error}")
        return "; ".join(said)

    def _server(self, port: int, *extra: str) -> None:
        self.servers[port] = self._spawn(
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.dir),
            "--dbfilename",
            f"dump-{port}.rdb",
            # A replica's first sync starts at once, not after the default 5 s wait for others.
            "--repl-diskless-sync-delay",
            "0",
            *extra,
        )

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [self.binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.processes.append(process)
        return process

    def _replica_in_sync(self) -> bool:
        with redis.Redis(port=self.replica_port, decode_responses=True) as replica:
            return bool(replica.info("replication").get("master_link_status") == "up")

    def _ready(self) -> bool:
        with self.sentinel() as client:
            replicas = client.sentinel_slaves(SERVICE)  # type: ignore[no-untyped-call]
        return bool(replicas) and self.master_port_now() == self.master_port

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ready():
                    return
            except (redis.ConnectionError, redis.ResponseError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.1)
