"""Kept for settings that name the old path: the code is in ``queues.config.settings``."""

from __future__ import annotations

from queues.config.settings import ALERT_DELIVERY_KEYS as ALERT_DELIVERY_KEYS
from queues.config.settings import DEFAULTS as DEFAULTS
from queues.config.settings import Reset as Reset
from queues.config.settings import default_prefix as default_prefix
from queues.config.settings import get_config as get_config
from queues.config.settings import on_change as on_change
