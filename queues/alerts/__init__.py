"""Alerts: ``thresholds.py``, ``signatures.py``, ``state.py`` (once per firing, resolved,
cooldown), ``undelivered.py``, ``watch.py`` (the sender's loop)."""
