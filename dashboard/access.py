"""Kept for settings that name the old path: the code is in ``dashboard.auth.access``."""

from __future__ import annotations

from dashboard.auth.access import Check as Check
from dashboard.auth.access import allows as allows
from dashboard.auth.access import anyone as anyone
from dashboard.auth.access import is_read_only as is_read_only
from dashboard.auth.access import read_check as read_check
from dashboard.auth.access import reads_are_open as reads_are_open
from dashboard.auth.access import staff_or_basic_operator as staff_or_basic_operator
from dashboard.auth.access import staff_or_basic_reader as staff_or_basic_reader
from dashboard.auth.access import write_check as write_check
