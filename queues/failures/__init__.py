"""Failed jobs grouped: ``failure_groups.py``, ``trends.py`` (per minute over a day),
``stack_frames.py``."""
