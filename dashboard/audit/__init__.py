"""The audit log: ``writer.py`` (writing rows), ``summary.py`` (what a row did, in words),
``visible.py`` (the rows an operator may read), ``export_api.py`` (``api/audit/``)."""
