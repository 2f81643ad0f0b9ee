"""The parts of the live follower (``queues/live/follower.py`` composes them).

``streams``: the blocking XREAD of every followed event stream; ``following``: which queues it
follows (discovered, watched, newly created). ``leadership``: the lease that
makes one process the reader, and the exchange of what every process's pages watch.
``watching``: that interest, as the reader serves it. ``schedule``: when each periodic chore is
next due. ``count_changes``, ``rows``, ``progress``, ``log_lines``: what the events become for the
pages.
``outbox``: one message per topic per pass, handed to the channel layer. ``status``: whether
Redis answers, and the writes it refuses.
"""
