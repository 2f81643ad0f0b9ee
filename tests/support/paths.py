"""Helpers that several test modules share.

Moved here from ``tests.conftest``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
