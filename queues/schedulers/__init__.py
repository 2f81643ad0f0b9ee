"""Job schedulers across every queue: read in two round trips per connection (everywhere.py),
their rows shaped and ordered (rows.py)."""
