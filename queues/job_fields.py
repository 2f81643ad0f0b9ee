"""Kept for settings that name the old path: the code is in ``queues.reads.job_fields``."""

from __future__ import annotations

from queues.reads.job_fields import HASH_ALIASES as HASH_ALIASES
from queues.reads.job_fields import OPTS_ALIASES as OPTS_ALIASES
from queues.reads.job_fields import due_at_ms as due_at_ms
from queues.reads.job_fields import job_duration_ms as job_duration_ms
from queues.reads.job_fields import job_from_hash as job_from_hash
