"""Example handlers for the four seed use cases, registered on import (``runqueueworker
--module bullpen_site.demo_handlers``; ``./run worker`` and ``./run demo`` do this).

- ``documents``: document analysis against a rate-limited upstream (documents.py);
- ``newsletter``: e-mail through Django's e-mail backends, a weekly digest scheduler
  (newsletter.py);
- ``images``: resizing to several widths and formats with Pillow (images.py);
- ``webhooks``: delivery with per-tenant fairness (webhooks.py).
"""

from __future__ import annotations

from bullpen_site.demo_handlers import documents, images, newsletter, webhooks

__all__ = ["documents", "images", "newsletter", "webhooks"]
