"""Sending alert notices: ``sender.py`` (starting the sender), ``delivery.py`` (e-mail,
webhooks, retries), ``messages.py`` (what a notice says); ``section.py`` (the queue page's
"Alerts" section)."""
