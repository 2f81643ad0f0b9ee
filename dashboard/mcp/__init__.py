"""The MCP (Model Context Protocol) server: assistants read queues, jobs, searches, failure
groups and history, and, when allowed, retry, pause and resume, under QUEUE_ACCESS, read-only
and the audit log.

- ``server.py``: the tools; ``reads.py`` and ``actions.py``: what they do, on the API's own
  reads and actions; ``texts.py``: their answers as short text; ``identity.py``: who the server
  is (``BULLPEN["MCP"]``). Started by ``manage.py bullpen_mcp`` (``./run mcp``).
"""
