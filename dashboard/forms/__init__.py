"""Request input as Django forms: one form per route's parameters.

``fields.py``: the fields several forms share (bounded whole numbers, text, durations, JSON,
job ids); ``answer.py``: the one place a form's errors become a 400 (``valid``), and a POST's
parameters from a query string, form body or JSON body (``action_input``); ``reads.py``: the GET
routes' forms; ``actions.py``: the POST actions' forms; ``job_options.py``: an added job's options;
``watch.py``: what a page asks of its live websocket (refusals go back over the socket).
"""
