"""Bullpen's page in the admin: one box, the dashboard's row first, then the audit log."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient

pytestmark = pytest.mark.django_db(transaction=True)


async def test_one_bullpen_box_with_the_dashboard_first(client: AsyncClient) -> None:
    root = await User.objects.acreate_superuser("root", "root@example.com", "long-secret-pw")
    await client.aforce_login(root, backend="django.contrib.auth.backends.ModelBackend")
    page = (await client.get("/admin/bullpen/")).content.decode()
    boxes = re.findall(r"<caption>\s*<a [^>]*>\s*Bullpen\s*</a>", page)
    assert len(boxes) == 1, boxes
    rows = re.findall(r'<th scope="row" id="bullpen-(\w+)">\s*<a href="([^"]+)"', page)
    assert rows[0] == ("dashboard", "/queues/")
    assert ("auditentry", "/admin/bullpen/auditentry/") in rows
