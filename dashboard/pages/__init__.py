"""The HTML pages: ``views.py`` (overview, queue, job), ``job_context.py``, ``job_rows.py``,
``overview_list.py`` + ``overview_ledger.py`` (the list kept between views) +
``overview_page.py``, ``flow_views.py``, ``triage.py`` (find, failure
groups, workers, alerts), ``charts.py``, ``switcher.py`` + ``switcher_matching.py`` (the
header's box), ``landing.py`` + ``notices.py`` (where an action lands, its confirmation),
``confirmations.py`` (what each action confirms: one table entry per action),
``not_found.py``, ``state_labels.py``, ``relatives.py``, ``converters.py``, ``htmx.py`` (what
htmx asked). ``urls.py``: its routes (in
``dashboard/urls.py``'s table)."""
