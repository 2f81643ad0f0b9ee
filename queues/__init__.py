"""BullMQ on Redis: reading queues and jobs, acting on them, following their events.

Nothing in this package knows about HTTP; the ``dashboard`` app is the only caller.
"""
