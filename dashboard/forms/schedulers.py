"""A job scheduler as the dashboard creates or updates it (BullMQ's upsertJobScheduler).

Exactly one of ``every`` (a duration: a bare number is ms, or as typed, "5 min") and
``pattern`` (cron, five or six fields, in ``tz``); ``start_date`` and ``end_date`` as ms since
the epoch or ISO 8601 (UTC when no zone is given); ``limit`` runs at most; the job's ``name``
(default: the scheduler's id), ``data`` and ``opts`` (JSON) are the template of every job made.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from django import forms
from django.core.exceptions import ValidationError

from dashboard.forms.durations import DurationError, parse_duration_ms
from dashboard.forms.fields import (
    ABSENT,
    ChoiceTextField,
    JsonField,
    SharedField,
    TextField,
    WholeNumberField,
)
from dashboard.forms.job_options import check_add_options
from queues.schedulers.rows import ORDERS

MAX_LIMIT = 1_000_000_000
SHORTEST_EVERY_MS = 1
# Options the scheduler itself sets on each job it makes: a template may not carry them.
SCHEDULER_OWNED = ("jobId", "delay", "repeat", "repeatJobKey")


class DateField(SharedField):
    """A moment as ms since the epoch, or ISO 8601 text (UTC when no zone); missing: None."""

    def to_python(self, value: Any) -> int | None:
        if value in (None, ""):
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if not isinstance(value, str):
            raise ValidationError("%(name)s must be ms since the epoch or an ISO 8601 date")
        text = value.strip()
        if text.isdigit():
            return int(text)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(
                "%(name)s must be ms since the epoch or an ISO 8601 date (2026-12-01T09:00)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)


class SchedulerForm(forms.Form):
    id = TextField(required=True)
    every = TextField(longest=100)
    pattern = TextField(longest=200)
    tz = TextField(longest=100)
    start_date = DateField()
    end_date = DateField()
    limit = WholeNumberField(low=1, high=MAX_LIMIT)
    name = TextField()
    data = JsonField()  # type: ignore[assignment]
    opts = JsonField()

    def clean_id(self) -> str:
        scheduler_id: str = self.cleaned_data["id"].strip()
        if not scheduler_id:
            raise ValidationError("%(name)s is required (the scheduler's id)")
        return scheduler_id

    def clean_every(self) -> int | None:
        typed: str = self.cleaned_data["every"].strip()
        if not typed:
            return None
        try:
            every = parse_duration_ms(typed)
        except DurationError as error:
            raise ValidationError("%(name)s: %(problem)s", params={"problem": str(error)}) from None
        if every < SHORTEST_EVERY_MS:
            raise ValidationError("%(name)s must be at least 1 ms")
        return every

    def clean_pattern(self) -> str:
        pattern: str = self.cleaned_data["pattern"].strip()
        if pattern and not croniter.is_valid(pattern, second_at_beginning=True):
            raise ValidationError("%(name)s is not a cron pattern (five or six fields)")
        return pattern

    def clean_tz(self) -> str:
        tz: str = self.cleaned_data["tz"].strip()
        if tz:
            try:
                ZoneInfo(tz)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValidationError(
                    "%(name)s is not a time zone (IANA names, as Europe/Paris)"
                ) from None
        return tz

    def clean_data(self) -> Any:
        data = self.cleaned_data["data"]
        return {} if data is ABSENT else data

    def clean_opts(self) -> dict[str, Any]:
        opts = self.cleaned_data["opts"]
        if opts is ABSENT or not opts:
            return {}
        if isinstance(opts, dict):
            owned = sorted(set(opts) & set(SCHEDULER_OWNED))
            if owned:
                raise ValidationError(
                    "%(name)s: the scheduler sets %(owned)s itself",
                    params={"owned": ", ".join(owned)},
                )
        check_add_options(opts)
        return dict(opts)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if self.errors:
            return found
        every, pattern = found.get("every"), found.get("pattern")
        if bool(every) == bool(pattern):
            raise ValidationError("Give every (a duration) or pattern (cron), one of them")
        if every and found.get("tz"):
            raise ValidationError("tz goes with a cron pattern, not with every")
        start, end = found.get("start_date"), found.get("end_date")
        if start is not None and end is not None and end <= start:
            raise ValidationError("end_date must come after start_date")
        if end is not None and end <= time.time() * 1000:
            # BullMQ would write nothing at all: say so rather than answer as if it had.
            raise ValidationError("end_date is past: the scheduler would make no job")
        found["name"] = found.get("name") or found["id"]
        return found

    def repeat_options(self) -> dict[str, Any]:
        """The cleaned form as BullMQ's repeat options."""
        found = self.cleaned_data
        chosen = {
            "every": found["every"],
            "pattern": found["pattern"] or None,
            "tz": found["tz"] or None,
            "startDate": found["start_date"],
            "endDate": found["end_date"],
            "limit": found["limit"],
        }
        return {key: value for key, value in chosen.items() if value is not None}


class AllSchedulersForm(forms.Form):
    """The schedulers page's and ``api/schedulers/``'s order (queues/schedulers/rows.py)."""

    order = ChoiceTextField(
        ORDERS, f"%(name)s must be one of: {', '.join(ORDERS)}", default="overdue"
    )
