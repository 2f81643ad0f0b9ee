"""Who is asking and what they may do: ``principal.py``, ``access.py`` (who may read and act),
``queue_access.py`` + ``queue_access_rules.py`` (per-queue access), ``basic_auth.py`` +
``basic_sign_in.py`` + ``backend.py`` (basic credentials), ``axes_gate.py`` + ``lockout.py``
(throttled guessing), ``same_origin.py``, ``queue_lookup.py`` (a URL's queue: its one name, its
reference, hidden or unknown), ``guards.py`` (the decorators every view goes through),
``mutation_steps.py`` (the named steps every action goes through), ``answers.py`` (errors as
statuses), ``viewer.py``, ``account_views.py`` (sign in and out). ``urls.py``: its routes (in
``dashboard/urls.py``'s table)."""
