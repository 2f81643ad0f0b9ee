"""``settings.BULLPEN``: ``settings.py`` (merged over the documented defaults), ``problems.py``
(what is wrong with it), ``queue_options.py``, ``redact_setting.py``."""
