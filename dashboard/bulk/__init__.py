"""Bulk actions from the web side: ``launch.py`` (starting one, this process's executor),
``api.py`` (following and cancelling). ``urls.py``: its routes (in
``dashboard/urls.py``'s table)."""
