"""Saved searches: ``views.py`` (``api/saved-searches/``: list, save, delete), ``store.py``
(the rows a user may see, and each one's link), ``urls.py``."""
