"""A request whose body Django refuses to read, answered as the API answers every error.

Django raises ``RequestDataTooBig`` (over ``DATA_UPLOAD_MAX_MEMORY_SIZE``) or another
``SuspiciousOperation`` (too many fields) the first time a body is read; left to Django, it
becomes the site's HTML 400 page, which an API client and the page's error toast cannot read.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest

MEGABYTE = 1024 * 1024


def too_big_message() -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    size = f"{limit / MEGABYTE:.1f} MB" if limit >= MEGABYTE else f"{limit} bytes"
    return (
        f"The request is too large: at most {size} ({limit} bytes, the site's "
        "DATA_UPLOAD_MAX_MEMORY_SIZE) is accepted"
    )


def refusal(error: Exception) -> tuple[str, int]:
    """The JSON error and status for what Django refused to read."""
    if isinstance(error, RequestDataTooBig):
        return too_big_message(), 413
    if isinstance(error, SuspiciousOperation):
        # Logged as Django logs the ones it handles itself.
        logging.getLogger(f"django.security.{type(error).__name__}").warning("%s", error)
    return f"Bad request: {error}", 400


def unreadable(request: HttpRequest) -> tuple[str, int] | None:
    """Read the body once, where a refusal can still be answered in JSON; None when it reads.

    The body first: a JSON body is not parsed into ``request.POST``, and would otherwise be
    read (and refused) only later, deep inside a view.
    """
    try:
        if request.content_type != "multipart/form-data":
            request.body  # noqa: B018 - read for its checks
        request.POST  # noqa: B018
    except (SuspiciousOperation, BadRequest) as error:
        return refusal(error)
    return None
