"""How a search's matches are sent: ``format`` (NDJSON lines, the default; ``ndjson`` or
``csv`` as a file to save) and, for CSV, ``columns``: ``data.<path>`` columns after the fixed
ones (comma list or repeated)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from dashboard.forms.fields import ChoiceTextField, SharedField
from dashboard.search.export import MAX_DATA_COLUMNS
from queues.search.query.tokens import field_name

FORMATS = ("", "ndjson", "csv")
MAX_COLUMN = 200  # characters of one column's path


class ColumnsField(SharedField):
    def to_python(self, value: Any) -> list[str]:
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) or v is None for v in values):
            raise ValidationError("%(name)s must be text", code="invalid")
        parts = list(dict.fromkeys(p.strip() for v in values if v for p in v.split(",")))
        parts = [p for p in parts if p]
        if len(parts) > MAX_DATA_COLUMNS:
            raise ValidationError(f"%(name)s: at most {MAX_DATA_COLUMNS} of them", code="max_items")
        for part in parts:
            if len(part) > MAX_COLUMN or not part.startswith("data.") or field_name(part) != part:
                raise ValidationError(
                    "%(name)s: %(value)r is not a data.<path> column",
                    code="invalid",
                    params={"value": part[:MAX_COLUMN]},
                )
        return parts


class ExportFields(forms.Form):
    format = ChoiceTextField(FORMATS, "%(name)s must be 'csv', 'ndjson' or left out")
    columns = ColumnsField()
