"""Kept for settings that name the old path: the code is in ``dashboard.auth.backend``."""

from __future__ import annotations

from dashboard.auth.backend import PATH as PATH
from dashboard.auth.backend import BasicAuthBackend as BasicAuthBackend
from dashboard.auth.backend import BasicUser as BasicUser
