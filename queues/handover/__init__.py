"""The live reader's summaries handed to a view (``summaries.py``): kept between views, so
that a view costs what changed since the last one, not a look-up per queue."""
