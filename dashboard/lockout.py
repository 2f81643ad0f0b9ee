"""Kept for settings that name the old path: the code is in ``dashboard.auth.lockout``."""

from __future__ import annotations

from dashboard.auth.lockout import STATUS as STATUS
from dashboard.auth.lockout import Answer as Answer
from dashboard.auth.lockout import json_answer as json_answer
from dashboard.auth.lockout import lockout_response as lockout_response
from dashboard.auth.lockout import message as message
from dashboard.auth.lockout import page_answer as page_answer
from dashboard.auth.lockout import retry_after as retry_after
