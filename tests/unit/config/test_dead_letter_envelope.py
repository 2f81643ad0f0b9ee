"""A dead letter's envelope read from list text that the list cap may have cut."""

from __future__ import annotations

import json

from queues.reads.dead_letters import leading_fields, read_envelope


def test_envelope_fields_before_the_list_cut() -> None:
    envelope = {
        "queue": "hooks",
        "prefix": "bull",
        "jobId": "12345",
        "name": "post",
        "failedReason": 'endpoint "down" ' + "é" * 40,
        "data": {"blob": "y" * 5000},
    }
    text = json.dumps(envelope)
    assert read_envelope(envelope) is envelope
    assert read_envelope(text[:2048]) == {k: v for k, v in envelope.items() if k != "data"}
    # A cut inside the id drops it (a wrong id is worse than none); inside the reason keeps
    # what came before the cut.
    assert read_envelope(text[: text.index("12345") + 3]) is None
    cut_reason = read_envelope(text[: text.index("down") + 2])
    assert cut_reason is not None and cut_reason["failedReason"] == 'endpoint "do…'
    assert leading_fields('{"a": 1, "b": "x\\') == {"a": 1}
    assert read_envelope("not json") is None and read_envelope({"queue": 1, "jobId": "1"}) is None
