"""Failed jobs grouped by what went wrong: the reason made generic, plus the top stack frame."""

from __future__ import annotations

import json

from queues.failure_groups import normalise, signature, top_frame


def test_signatures_ignore_ids_numbers_and_hex() -> None:
    assert normalise("user 42 not found (req 9f86d081884c7d65)") == "user <n> not found (req <hex>)"
    a = signature(
        "timeout after 3000 ms", '["Error: timeout after 3000 ms\\n    at call (/app/x.js:10:5)"]'
    )
    b = signature(
        "timeout after 4500 ms", '["Error: timeout after 4500 ms\\n    at call (/app/x.js:10:5)"]'
    )
    assert a == b and a.startswith("timeout after <n> ms @ call")
    trace = (
        'Traceback (most recent call last):\n  File "/app/a.py", line 3, in run\n    x()\n'
        '  File "/app/b.py", line 9, in x\nValueError: boom'
    )
    py = signature("boom", json.dumps([trace]))
    assert py == "boom @ b.py in x"


def test_uuids_addresses_and_quoted_values_are_made_generic() -> None:
    reason = "job 0f8fad5b-d9cb-469f-a165-70867728950e to 10.0.0.5 failed: 'alice' unknown"
    assert normalise(reason) == "job <uuid> to <ip> failed: '…' unknown"
    assert normalise("  0xdeadbeef  ") == "<hex>"


def test_the_top_frame_of_a_cut_stack_trace() -> None:
    assert top_frame(None) == top_frame("") == ""
    full = json.dumps(["Error: first\n    at load (/app/a.js:1:1)", "Error: later"])
    assert top_frame(full) == ""  # the last attempt's text has no frame
    # Cut by the size cap: not JSON any more, read as the escaped text it is.
    cut = '["Error: boom\\n    at handler (/srv/worker.js:42:7)\\n    at next (/srv/q'
    assert top_frame(cut) == "handler (/srv/worker.js:<n>:<n>)"


def test_a_job_without_a_reason_still_has_a_signature() -> None:
    assert signature(None, None) == "(no failed reason)"
    assert len(signature("x" * 1000, None)) == 300
