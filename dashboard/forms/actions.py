"""The POST actions' parameters (given in the query string, a form body or a JSON body)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from dashboard.forms.durations import MAX_MS, DurationError, parse_duration_ms
from dashboard.forms.fields import (
    ABSENT,
    ChoiceTextField,
    FlagField,
    HumanDurationField,
    JobIdsField,
    JsonField,
    TextField,
    WholeNumberField,
    milliseconds_field,
)
from dashboard.forms.job_options import check_add_options
from dashboard.pages import overview_list
from queues.config.settings import get_config
from queues.reads.pause_reasons import MAX_REASON

MAX_BULK = 1000
BULK_ACTIONS = ("retry", "remove", "promote")
DEFAULT_GRACE = "1 h"
MAX_CLEAN_LIMIT = 1_000_000_000  # jobs one clean may remove (0: no limit)
MAX_PRIORITY = 2_097_152  # BullMQ's highest priority
# A failure group's signature: a reason (300 characters at most) and a stack frame.
SIGNATURE_LENGTH = 10_000


# A field named like a Form attribute (``data``) is fine: the form's metaclass moves declared
# fields out of the class, into ``base_fields``.


class UpdateDataForm(forms.Form):
    data = JsonField(  # type: ignore[assignment]
        required=True,
        error_messages={"required": "%(name)s is required (the new job data, as JSON)"},
    )


class PriorityForm(forms.Form):
    priority = WholeNumberField(low=0, high=MAX_PRIORITY, required=True)


class RetryAllForm(forms.Form):
    state = TextField(default="failed")


class CleanForm(forms.Form):
    state = TextField()
    # ``grace`` as a person types it ("30 min"), or ``grace_ms`` as API clients always sent.
    grace = HumanDurationField(default=DEFAULT_GRACE)
    grace_ms = milliseconds_field()
    limit = WholeNumberField(default=0, low=0, high=MAX_CLEAN_LIMIT)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if self.data.get("grace") not in (None, "") and found.get("grace_ms") is not None:
            raise ValidationError("Give grace or grace_ms, not both")
        if found.get("grace_ms") is not None:
            found["grace"] = found["grace_ms"]
        return found


class RetryJobForm(forms.Form):
    # Count the job's attempts from zero again (BullMQ's resetAttemptsMade/Started): a job
    # that used all its attempts then gets all of them once more, not one.
    reset_attempts = FlagField()


class PauseForm(forms.Form):
    # Why the queue is paused, shown beside its "paused" badge until it is resumed.
    reason = TextField(longest=MAX_REASON)

    def clean_reason(self) -> str:
        return str(self.cleaned_data["reason"]).strip()


class CancelJobForm(forms.Form):
    # Let the job's attempts and backoff retry it, as after any failed attempt (by default a
    # cancelled job fails for good).
    retry = FlagField()
    # The operator's own words, added to the failed reason after who cancelled it.
    reason = TextField(longest=500)


class ObliterateForm(forms.Form):
    # The page asks the user to type the name (htmx sends it as HX-Prompt instead).
    confirm = TextField()
    # Also destroy the jobs workers hold (active): their workers then cannot finish them.
    force = FlagField()


class AddJobForm(forms.Form):
    name = TextField()
    data = JsonField()  # type: ignore[assignment]
    opts = JsonField()

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if not name:
            raise ValidationError("A job needs a name")
        return name

    def clean_data(self) -> Any:
        data = self.cleaned_data["data"]
        return {} if data is ABSENT else data

    def clean_opts(self) -> dict[str, Any]:
        opts = self.cleaned_data["opts"]
        if opts is ABSENT or not opts:
            return {}
        check_add_options(opts)
        return dict(opts)


class BulkForm(forms.Form):
    action = ChoiceTextField(BULK_ACTIONS, f"%(name)s must be one of: {', '.join(BULK_ACTIONS)}")
    ids = JobIdsField(most=MAX_BULK)


class GroupOfQueuesForm(forms.Form):
    """One group of the overview: how queues are grouped, the group's key, the delimiter."""

    group = ChoiceTextField(
        [g for g in overview_list.GROUPINGS if g],
        "%(name)s must be one of: head, tail, prefix",
        required=True,
    )
    key = TextField(required=True)
    delimiter = TextField(longest=5)

    def clean_delimiter(self) -> str:
        return str(self.cleaned_data["delimiter"] or get_config()["GROUP_DELIMITER"])


class GroupActionForm(forms.Form):
    signature = TextField(longest=SIGNATURE_LENGTH, required=True)


MAX_CONCURRENCY = 1_000_000  # jobs at once across all workers: beyond this it is a typing slip
MAX_RATE_JOBS = 1_000_000_000  # jobs per rate-limit window


class RescheduleForm(forms.Form):
    """A delayed job's new delay, counted from now: ``delay`` as a person types it ("30 min"),
    or ``delay_ms`` as API clients send it."""

    delay = TextField(longest=100)
    delay_ms = milliseconds_field()

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        typed, given = found.get("delay"), found.get("delay_ms")
        if typed and given is not None:
            raise ValidationError("Give delay or delay_ms, not both")
        if typed:
            try:
                found["delay_ms"] = parse_duration_ms(typed)
            except DurationError as error:
                raise ValidationError(
                    "delay: %(problem)s", params={"problem": str(error)}
                ) from None
        elif given is None and "delay_ms" not in self.errors:
            raise ValidationError(
                f"delay_ms is required: the new delay from now, 0 to {MAX_MS} ms "
                "(or delay, as 30 min)"
            )
        return found


def _given(form: forms.Form, *names: str) -> bool:
    """Whether the client sent any of ``names``, even empty (empty asks for a removal)."""
    return any(name in form.data for name in names)


class ConcurrencyForm(forms.Form):
    """The queue's global concurrency; given empty (or JSON null), it is removed."""

    concurrency = WholeNumberField(low=1, high=MAX_CONCURRENCY)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if not _given(self, "concurrency"):
            raise ValidationError(
                "concurrency is required: the most jobs all workers run at once "
                f"(1 to {MAX_CONCURRENCY}), or empty to remove the limit"
            )
        return found


class RateLimitForm(forms.Form):
    """The queue's global rate limit: at most ``max`` jobs per ``duration_ms``; both given
    empty (or JSON null), it is removed."""

    max = WholeNumberField(low=1, high=MAX_RATE_JOBS)
    duration_ms = WholeNumberField(low=1, high=MAX_MS)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if not _given(self, "max", "duration_ms"):
            raise ValidationError(
                "max and duration_ms are required: at most max jobs per duration_ms "
                "milliseconds, or both empty to remove the limit"
            )
        if self.errors:
            return found
        if (found.get("max") is None) != (found.get("duration_ms") is None):
            raise ValidationError(
                "Give max and duration_ms together (both empty removes the rate limit)"
            )
        return found


class MoveToFailedForm(forms.Form):
    """Why an active job is moved to failed (optional: a default reason says who did it)."""

    reason = TextField(longest=1000)
