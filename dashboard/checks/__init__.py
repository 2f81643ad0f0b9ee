"""System checks: ``mounting.py`` (what a mounting site forgot), ``throttle.py``,
``versions.py``."""
