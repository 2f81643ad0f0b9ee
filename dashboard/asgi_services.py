"""Kept for settings that name the old path: the code is in ``dashboard.services.lifecycle``."""

from __future__ import annotations

from dashboard.services.lifecycle import ASGIApp as ASGIApp
from dashboard.services.lifecycle import BackgroundServices as BackgroundServices
from dashboard.services.lifecycle import Receive as Receive
from dashboard.services.lifecycle import Scope as Scope
from dashboard.services.lifecycle import Send as Send
from dashboard.services.lifecycle import start_services as start_services
from dashboard.services.lifecycle import stop_services as stop_services
from dashboard.services.lifecycle import with_background_services as with_background_services
