"""What modules keep in memory between requests is cleared between tests
(tests/support/module_state.py,
called after every test by conftest's ``fresh_module_state``)."""

from __future__ import annotations

import io
import time

from dashboard.auth import basic_sign_in
from queues.alerts import signatures, thresholds
from queues.failures import failure_groups
from queues.reads import discovery
from queues.reads.keys import QueueRef
from queues.runner import json_logs
from tests.support import module_state

MAIL = QueueRef("bull", "mail")


def test_reset_clears_what_a_test_leaves_behind() -> None:
    thresholds._at_limit_since[MAIL] = time.monotonic()
    basic_sign_in._remembered["right"]["key"] = time.monotonic() + 300
    failure_groups._shared[MAIL] = (time.monotonic(), 1, failure_groups.GroupReport([], 0, 0))
    discovery._cache["default"] = discovery.Discovered(queues=(MAIL,))
    json_logs.configure_json_logs(io.StringIO())
    signatures._known[(MAIL, "1", 0)] = "Timeout"

    module_state.reset()

    assert thresholds._at_limit_since == {}
    assert basic_sign_in._remembered == {"right": {}, "wrong": {}}
    assert failure_groups._shared == {} and discovery._cache == {}
    assert json_logs._Sink.stream is None
    assert signatures._known == {}
