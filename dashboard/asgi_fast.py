"""Kept for settings that name the old path: the code is in ``dashboard.api.fast_path``."""

from __future__ import annotations

from dashboard.api.fast_path import ASGIApp as ASGIApp
from dashboard.api.fast_path import FastReadAPI as FastReadAPI
from dashboard.api.fast_path import Receive as Receive
from dashboard.api.fast_path import Scope as Scope
from dashboard.api.fast_path import Send as Send
