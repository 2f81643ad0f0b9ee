"""A queue's deduplication keys: ``views.py`` (the list's API and the queue page's section,
releasing one key or every orphan)."""
