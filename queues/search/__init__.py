"""Search: ``scan.py`` (one state of a queue, bounded), ``all_queues.py``, ``matches.py``,
``step_pace.py``."""
