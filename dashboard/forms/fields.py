"""Fields the dashboard's forms share. Every value is bounded, and every refusal says what is
accepted, so user input gets a 400 that explains itself, never a 500 or a Redis error.

Values come from query strings and form bodies (text) or JSON bodies (any JSON value).
Messages start with ``%(name)s``, the parameter's name (filled in by ``answer.valid``); a value
the client sent goes in as a parameter, never into the message itself.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from dashboard.forms.durations import ACCEPTED, MAX_MS, DurationError, parse_duration_ms
from queues.reads import jsontext

# Job ids and similar names: longer ones cannot be BullMQ's.
MAX_ID = 1024
_MISSING = (None, "")


def _bounds(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" between {low} and {high}"
    if low is not None:
        return f" of {low} or more"
    if high is not None:
        return f" of at most {high}"
    return ""


def _as_int(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:  # not digits, or more digits than Python converts
            return None
    return None


class SharedField(forms.Field):
    """A field no form changes once declared: every form of a class shares it rather than
    copying it (Django copies each field, widget and message for every form; the job list's
    form is read on the API's hottest route)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs["error_messages"] = {
            "required": "%(name)s is required",
            **kwargs.get("error_messages", {}),
        }
        super().__init__(**kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedField:
        return self


class WholeNumberField(SharedField):
    """An int within ``low``..``high``. Missing or empty: ``default``, or "is required" when
    there is none. Text and JSON numbers are accepted; JSON booleans and fractions are not."""

    def __init__(
        self,
        *,
        default: int | None = None,
        low: int | None = None,
        high: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.default, self.low, self.high = default, low, high

    def to_python(self, value: Any) -> int | None:
        if value in _MISSING:
            return self.default
        number = _as_int(value)
        bounds = _bounds(self.low, self.high)
        if number is None:
            raise ValidationError(f"%(name)s must be a whole number{bounds}", code="invalid")
        if (self.low is not None and number < self.low) or (
            self.high is not None and number > self.high
        ):
            raise ValidationError(f"%(name)s must be{bounds}", code="out_of_range")
        return number

    def validate(self, value: Any) -> None:
        if value is None and self.default is None and self.required:
            raise ValidationError(self.error_messages["required"], code="required")


class TextField(SharedField):
    """Text of at most ``longest`` characters; missing or empty: ``default``."""

    def __init__(self, *, default: str = "", longest: int = MAX_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.default, self.longest = default, longest

    def to_python(self, value: Any) -> str:
        if value in _MISSING:
            return self.default
        if not isinstance(value, str):
            raise ValidationError("%(name)s must be text", code="invalid")
        if len(value) > self.longest:
            raise ValidationError(
                f"%(name)s is too long (at most {self.longest} characters)", code="max_length"
            )
        return value


class ChoiceTextField(TextField):
    """One of ``choices``; missing or empty: ``default``."""

    def __init__(self, choices: tuple[str, ...] | list[str], message: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.choices, self.message = tuple(choices), message

    def to_python(self, value: Any) -> str:
        chosen = super().to_python(value)
        if chosen not in self.choices:
            raise ValidationError(self.message, code="invalid_choice", params={"value": chosen})
        return chosen


class HumanDurationField(SharedField):
    """A duration as a person types it ("30 min", "1h30m"; a bare number is ms), in ms;
    missing or empty: ``default`` (also as typed)."""

    def __init__(self, *, default: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.default = default

    def to_python(self, value: Any) -> int:
        text = self.default if value in _MISSING else value
        if not isinstance(text, str | int) or isinstance(text, bool):
            raise ValidationError(f"%(name)s must be {ACCEPTED}", code="invalid")
        try:
            return parse_duration_ms(str(text))
        except DurationError as error:
            raise ValidationError(
                "%(name)s: %(problem)s", code="invalid", params={"problem": str(error)}
            ) from None


def milliseconds_field() -> WholeNumberField:
    """A duration an API client gives in ms: 0 up to ten years."""
    return WholeNumberField(low=0, high=MAX_MS)


# Stands for "not given" where ``None`` (JSON null) is a value.
ABSENT: Any = object()


class JsonField(SharedField):
    """A JSON value. Text is JSON text (``"hello"`` with its quotes is a string; a bare word
    is refused); a JSON body may also give the value itself. Missing or empty: ``ABSENT``."""

    def to_python(self, value: Any) -> Any:
        if value in _MISSING:
            return ABSENT
        if not isinstance(value, str):
            return value
        try:
            return jsontext.loads_shown(value)
        except jsontext.TooDeep:
            raise ValidationError(
                "%(name)s is nested deeper than %(limit)s levels",
                code="too_deep",
                params={"limit": jsontext.MAX_DEPTH},
            ) from None
        except ValueError:
            raise ValidationError(
                '%(name)s is not valid JSON (text needs quotes, as in "hello")', code="invalid"
            ) from None

    def validate(self, value: Any) -> None:
        if value is ABSENT and self.required:
            raise ValidationError(self.error_messages["required"], code="required")


class JobIdsField(SharedField):
    """Job ids: a list, or text with commas; at most ``most`` of them."""

    def __init__(self, *, most: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.most = most

    def to_python(self, value: Any) -> list[str]:
        ids = value or []
        if isinstance(ids, str):
            ids = [part for part in ids.split(",") if part]
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise ValidationError("%(name)s must be a non-empty list of job ids", code="invalid")
        if any(len(i) > MAX_ID for i in ids):
            raise ValidationError(f"a job id has at most {MAX_ID} characters", code="max_length")
        if len(ids) > self.most:
            raise ValidationError(f"at most {self.most} jobs at once", code="max_items")
        return ids


class FlagField(SharedField):
    """Yes or no: ``1``, ``true``, ``yes``, ``on`` (a ticked checkbox), or JSON ``true`` or
    ``1``; ``0``, ``false``, ``no``, ``off``, or JSON ``false`` or ``0``. Missing or empty: no."""

    _YES = ("1", "true", "yes", "on")
    _NO = ("0", "false", "no", "off")

    def to_python(self, value: Any) -> bool:
        if value in _MISSING:
            return False
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return value == 1
        word = value.strip().lower() if isinstance(value, str) else None
        if word in self._YES:
            return True
        if word in self._NO:
            return False
        raise ValidationError("%(name)s must be 1 or 0", code="invalid")
