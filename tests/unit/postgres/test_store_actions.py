"""The one set of what a PostgreSQL store does names real actions, and every button the pages
leave out on a store names one: a misspelt name would hide a button the store does, or show
one it refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from queues.postgres.store_actions import EVERY_ACTION, ON_POSTGRES, POSTGRES_ACTIONS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]


def action_names() -> set[str]:
    code = "".join(path.read_text() for path in (ROOT / "dashboard").rglob("*.py"))
    names = set(re.findall(r'mutation_view\(\s*"([a-z-]+)"', code))
    # Acting on search matches names its action from the kind (dashboard/search/match_actions.py).
    assert 'mutation_view(f"{action}-matches")' in code
    return names | {f"{kind}-matches" for kind in ("retry", "promote", "remove")}


def test_the_set_names_actions_there_are() -> None:
    known = action_names()
    assert POSTGRES_ACTIONS <= known, sorted(POSTGRES_ACTIONS - known)


def test_every_button_left_out_names_an_action_there_is() -> None:
    asked: set[str] = set()
    for path in (ROOT / "templates" / "bullpen").glob("*.html"):
        asked |= set(re.findall(r'"([a-z-]+)" in supports', path.read_text()))
    code = "".join(path.read_text() for path in (ROOT / "dashboard").rglob("*.py"))
    asked |= set(re.findall(r'"([a-z-]+)" (?:not )?in supported\(', code))
    assert {"cancel", "move-to-wait", "reschedule", "retry-matches", "silence-alert"} <= asked
    assert asked <= action_names(), sorted(asked - action_names())
    assert all(name in EVERY_ACTION for name in asked)
    refused = {name for name in asked if name not in ON_POSTGRES}
    assert refused == asked - POSTGRES_ACTIONS and "move-to-wait" in refused
    assert "cancel" not in refused  # a store's workers hear it on the store
