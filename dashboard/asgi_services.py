"""Kept for settings that name the old path: the code is in ``dashboard.services``."""

from __future__ import annotations

from dashboard.services import ASGIApp as ASGIApp
from dashboard.services import BackgroundServices as BackgroundServices
from dashboard.services import Receive as Receive
from dashboard.services import Scope as Scope
from dashboard.services import Send as Send
from dashboard.services import start_services as start_services
from dashboard.services import stop_services as stop_services
from dashboard.services import with_background_services as with_background_services
