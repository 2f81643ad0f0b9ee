"""What modules keep in memory between requests is cleared between tests (tests/module_state.py,
called after every test by conftest's ``fresh_module_state``)."""

from __future__ import annotations

import io
import time

from dashboard import basic_sign_in
from queues import alert_signatures, alerts, discovery, failure_groups
from queues.keys import QueueRef
from queues.runner import logs
from tests import module_state

MAIL = QueueRef("bull", "mail")


def test_reset_clears_what_a_test_leaves_behind() -> None:
    alerts._at_limit_since[MAIL] = time.monotonic()
    basic_sign_in._remembered["right"]["key"] = time.monotonic() + 300
    failure_groups._shared[MAIL] = (time.monotonic(), 1, failure_groups.GroupReport([], 0, 0))
    discovery._cache["default"] = discovery.Discovered(queues=(MAIL,))
    logs.configure_json_logs(io.StringIO())
    alert_signatures._known[(MAIL, "1", 0)] = "Timeout"

    module_state.reset()

    assert alerts._at_limit_since == {}
    assert basic_sign_in._remembered == {"right": {}, "wrong": {}}
    assert failure_groups._shared == {} and discovery._cache == {}
    assert logs._Sink.stream is None
    assert alert_signatures._known == {}
