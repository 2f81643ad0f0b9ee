"""The history comparison bench's split of a ``MONITOR`` capture by sender
(bench/history/redis_monitor.py): a script's commands go to whoever ran the script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _monitor() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "redis_monitor", ROOT / "bench" / "history" / "redis_monitor.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CAPTURE = """OK
10.000001 [0 127.0.0.1:1001] "EVALSHA" "abc" "2" "bull:q:active" "bull:q:metrics:completed"
10.000002 [0 lua] "HGET" "bull:q:metrics:completed" "prevTS"
10.000003 [0 lua] "HINCRBY" "bull:q:metrics:completed" "count" "1"
10.000004 [0 lua] "ZADD" "bull:q:completed" "10000" "1"
10.100000 [0 127.0.0.1:2002] "HMGET" "bull:q:1" "timestamp"
10.200000 [0 127.0.0.1:3003] "eval" "local x" "1" "bull-board:metrics:q:runtime:hour:d"
10.200001 [0 lua] "HGET" "bull-board:metrics:q:runtime:hour:d" "1"
10.300000 [0 127.0.0.1:9999] "PING"
20.000000 [0 127.0.0.1:2002] "XREAD" "BLOCK" "1000" "STREAMS" "bull:q:events" "0"
"""
PARTIES = {"127.0.0.1:1001": "load", "127.0.0.1:2002": "bullpen", "127.0.0.1:3003": "bullboard"}


def test_script_commands_count_to_the_scripts_sender(tmp_path: Path) -> None:
    path = tmp_path / "monitor.log"
    path.write_text(CAPTURE)
    found = _monitor().tally(path, PARTIES, {"all": (0.0, 100.0)})["all"]
    assert found.total("bullboard", lua=False) == 1
    assert found.total("bullboard") == 2
    assert found.by_command("bullboard") == {"EVAL": 1, "HGET": 1}
    # The workers' script: its own commands to load, those on BullMQ's metrics keys apart.
    assert found.by_command("load") == {"EVALSHA": 1, "ZADD": 1}
    assert found.by_command("load metrics") == {"HGET": 1, "HINCRBY": 1}
    assert found.total("other") == 1


def test_commands_count_in_the_window_they_were_run_in(tmp_path: Path) -> None:
    path = tmp_path / "monitor.log"
    path.write_text(CAPTURE)
    found = _monitor().tally(path, PARTIES, {"early": (10.0, 11.0), "late": (11.0, 30.0)})
    assert found["early"].by_command("bullpen") == {"HMGET": 1}
    assert found["late"].by_command("bullpen") == {"XREAD": 1}
    assert found["late"].total("load") == 0
