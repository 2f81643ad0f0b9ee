"""What each hygiene warning says, in the request's language: what was found and the BullMQ
option to change (its name as BullMQ spells it, never translated)."""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext

from queues.hygiene import warnings as codes
from queues.hygiene.warnings import HygieneWarning


def _number(value: int) -> str:
    return str(number_format(value, force_grouping=True))


def text(warning: HygieneWarning) -> str:
    figures = {name: _number(value) for name, value in warning.figures.items()}
    if warning.code == codes.KEEPS_COMPLETED:
        return (
            gettext(
                "%(kept)s completed jobs are kept in Redis: set removeOnComplete (for example "
                "{count: 1000}) on the jobs or in the queue's defaultJobOptions."
            )
            % figures
        )
    if warning.code == codes.KEEPS_FAILED:
        return (
            gettext(
                "%(kept)s failed jobs are kept in Redis: set removeOnFail (for example "
                "{count: 5000}) on the jobs or in the queue's defaultJobOptions."
            )
            % figures
        )
    if warning.code == codes.EVENTS_AT_CAP:
        return (
            gettext(
                "The events stream is at its cap (%(length)s events, cap %(cap)s): the oldest "
                "are dropped as new ones come. Raise streams.events.maxLen if event readers "
                "fall behind."
            )
            % figures
        )
    if warning.code == codes.NO_METRICS:
        return gettext(
            "Jobs finish but no worker records metrics (BullMQ's metrics keys are absent): "
            "start the workers with the metrics option."
        )
    if warning.code == codes.LEGACY_REPEATABLE:
        count = warning.figures.get("count", 0)
        return (
            ngettext(
                "%(count)s legacy repeatable job (from BullMQ before 5.16): replace it with a job "
                "scheduler through upsertJobScheduler.",
                "%(count)s legacy repeatable jobs (from BullMQ before 5.16): replace them with job "
                "schedulers through upsertJobScheduler.",
                count,
            )
            % figures
        )
    return warning.code
