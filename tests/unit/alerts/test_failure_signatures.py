"""Failed jobs grouped by what went wrong: the reason made generic, plus the top stack frame."""

from __future__ import annotations

import json

from queues.failures.failure_groups import normalise, signature, signature_of, top_frame
from queues.failures.stack_frames import unescape


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


def test_the_last_attempt_names_the_group_not_the_runner_or_bullmq() -> None:
    attempt = (
        'Traceback (most recent call last):\n  File "/srv/queues/runner/worker.py", line 291, '
        'in _run_one\n    x\n  File "/srv/app/billing.py", line 9, in charge\n    y\n'
        '  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode\nValueError: z'
    )
    first = 'Traceback (most recent call last):\n  File "/srv/other.py", line 1, in old\nE: 1'
    assert top_frame(json.dumps([first, attempt])) == "billing.py in charge"
    only_runner = 'Traceback:\n  File "/srv/queues/runner/worker.py", line 1, in _run_one\nE'
    assert top_frame(json.dumps([only_runner])) == "worker.py in _run_one"
    node = (
        "Error: lock lost\n    at Job.moveToFailed (/app/node_modules/bullmq/dist/cjs/job.js:9:1)"
        "\n    at send (/app/mail.js:12:3)\n    at Worker.callProcessJob "
        "(/app/node_modules/bullmq/dist/cjs/classes/worker.js:5:5)"
    )
    assert top_frame(json.dumps([node])) == "send (/app/mail.js:<n>:<n>)"


def test_pieces_cut_inside_an_escape_still_read() -> None:
    assert unescape('tail\\n  File \\"/a.py\\", line 1, in f\\u00e9\\u26') == (
        'tail\n  File "/a.py", line 1, in f\u00e9'
    )
    assert unescape("\\ud83d alone") == "\ufffd alone"
    pieces = [unescape('Traceback\\n  File \\"/app/a.py\\", line 3, in run\\n  Fi')]
    pieces.append(unescape('\\", line 8, in deep\\nValueError: boom'))
    pieces.append(unescape('File \\"/app/b.py\\", line 8, in deep\\nValueError: boom'))
    assert signature_of("boom", pieces) == "boom @ b.py in deep"
