"""A real Redis Cluster on one machine: three masters, no replicas, slots spread evenly.

Each node's cluster bus listens on its port + 10000, so ports are chosen below 55536 with that
one free too.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.cluster import ClusterNode, RedisCluster


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(count: int) -> list[int]:
    """``count`` ports P with P and P + 10000 free."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port < 55536 and port not in ports and _free(port + 10000):
            ports.append(port)
    return ports


class ClusterTopology:
    def __init__(self, masters: int = 3, *, full_coverage: bool = True) -> None:
        binary = shutil.which("redis-server")
        if binary is None or shutil.which("redis-cli") is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="bullpen-cluster-"))
        self.ports = cluster_ports(masters)
        self.processes: list[subprocess.Popen[bytes]] = []
        # False: the masters left keep serving their slots when one is gone (a deployment
        # that prefers part of its queues to none sets cluster-require-full-coverage no).
        self.full_coverage = full_coverage

    @property
    def url(self) -> str:
        """Bullpen's REDIS_URL for the cluster (every node named: any one would do)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    @property
    def nodes(self) -> str:
        """The Node peer's ``--cluster`` flag."""
        return ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def start(self) -> None:
        for port in self.ports:
            node_dir = self.dir / str(port)
            node_dir.mkdir()
            self.processes.append(
                subprocess.Popen(
                    [
                        self.binary,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        str(node_dir / "nodes.conf"),
                        "--dir",
                        str(node_dir),
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--cluster-require-full-coverage",
                        "yes" if self.full_coverage else "no",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port in self.ports:
            self._wait(lambda p=port: redis.Redis(port=p).ping(), f"node {port}")
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in self.ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        for port in self.ports:
            self._wait(lambda p=port: self._ok(p), f"cluster_state:ok on {port}")

    def client(self) -> RedisCluster:
        return RedisCluster(
            startup_nodes=[ClusterNode("127.0.0.1", port) for port in self.ports],
            decode_responses=True,
        )

    def keys_per_node(self) -> dict[int, int]:
        """How many keys each master holds (to show the data is spread)."""
        return {port: int(redis.Redis(port=port).dbsize()) for port in self.ports}

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    @staticmethod
    def _ok(port: int) -> bool:
        with redis.Redis(port=port, decode_responses=True) as client:
            return str(client.execute_command("CLUSTER", "INFO")).startswith("cluster_state:ok")

    @staticmethod
    def _wait(ready: object, what: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ready():  # type: ignore[operator]
                    return
            except (redis.ConnectionError, redis.ResponseError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.1)
