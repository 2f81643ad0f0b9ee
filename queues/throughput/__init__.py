"""``rates.py`` (completed and failed per minute), ``sampler.py`` (Bullpen's own samples),
``durations.py``, ``recent.py``."""
