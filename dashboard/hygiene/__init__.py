"""A queue's hygiene: ``views.py`` (the info API and the queue page's section), ``texts.py``
(what each warning says)."""
