"""What the pages show of one queue's alerts: each rule firing, silenced or acknowledged, with its
hold, the loud ones first.

A silenced rule is shown while its silence runs, firing or not (so that it can be unsilenced
before it fires); an acknowledged one only while it fires (its acknowledgement ends when it
resolves, but the sender only notices at its next pass). Firing and not held stands out; held
ones are quieter: acknowledged (someone is on it), then silenced (nobody is told).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from queues.alerts.silences import Hold
from queues.alerts.thresholds import DEFAULTS, Alert

Status = Literal["firing", "acknowledged", "silenced"]
FIRING: Status = "firing"
ACKNOWLEDGED: Status = "acknowledged"
SILENCED: Status = "silenced"
LOUDNESS = (FIRING, ACKNOWLEDGED, SILENCED)
_RULE_ORDER = {rule: index for index, rule in enumerate(DEFAULTS)}


def status_of(hold: Hold | None, now: float) -> Status:
    """How a firing rule under ``hold`` is shown: a running silence wins over an
    acknowledgement (nobody is told, whoever acknowledged it)."""
    if hold is None:
        return FIRING
    if hold.silenced(now):
        return SILENCED
    return ACKNOWLEDGED if hold.acknowledged_by else FIRING


@dataclass(frozen=True)
class ShownAlert:
    rule: str
    status: Status
    # None: silenced while it does not fire.
    alert: Alert | None
    hold: Hold

    @property
    def firing(self) -> bool:
        return self.alert is not None

    @property
    def silenced_until_ms(self) -> int | None:
        until = self.hold.silenced_until
        return None if until is None else int(until * 1000)

    @property
    def acknowledged_at_ms(self) -> int | None:
        at = self.hold.acknowledged_at
        return None if at is None else int(at * 1000)


def shown_alerts(
    firing: Iterable[Alert], holds: Mapping[str, Hold], now: float
) -> list[ShownAlert]:
    """One queue's alerts as its page lists them, given the alerts firing on it and its holds
    by rule (as :func:`queues.alerts.silences.read_holds` reads them)."""
    shown: dict[str, ShownAlert] = {}
    for alert in firing:
        hold = holds.get(alert.rule)
        shown[alert.rule] = ShownAlert(alert.rule, status_of(hold, now), alert, hold or Hold())
    for rule, hold in holds.items():
        if rule not in shown and hold.silenced(now):
            shown[rule] = ShownAlert(rule, SILENCED, None, hold)
    return sorted(
        shown.values(),
        key=lambda item: (
            LOUDNESS.index(item.status),
            not item.firing,
            _RULE_ORDER.get(item.rule, len(_RULE_ORDER)),
            item.rule,
        ),
    )
