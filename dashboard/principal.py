"""Kept for settings that name the old path: the code is in ``dashboard.auth.principal``."""

from __future__ import annotations

from dashboard.auth.principal import ANONYMOUS as ANONYMOUS
from dashboard.auth.principal import Principal as Principal
from dashboard.auth.principal import Via as Via
from dashboard.auth.principal import basic_user_configured as basic_user_configured
from dashboard.auth.principal import from_request as from_request
from dashboard.auth.principal import from_scope as from_scope
from dashboard.auth.principal import refreshed as refreshed
