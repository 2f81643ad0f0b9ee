"""The runner's configuration error: raised at start-up, never while jobs run."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


class RunnerConfigError(ImproperlyConfigured):
    """A handler, its options or a schedule is not acceptable; the message says how to fix it."""
