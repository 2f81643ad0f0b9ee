"""The host's fixtures: a real Redis (its URL comes from the environment) and the host's users."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
from browser import PASSWORD
from bullmq import Queue
from django.contrib.auth.models import Permission, User


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("HOST_REDIS_URL")
    if not url:
        pytest.fail("HOST_REDIS_URL is not set: tests/site/test_host_site.py runs these tests")
    return url


@pytest.fixture(autouse=True)
def empty_redis(redis_url: str) -> Iterator[None]:
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.close()
    yield


@pytest.fixture(autouse=True)
async def stop_bullpen() -> AsyncIterator[None]:
    yield
    # Bullpen's background services and Redis clients belong to this test's event loop.
    from dashboard.services import lifecycle

    await lifecycle.server_stopping()


@pytest.fixture
async def emails(redis_url: str) -> dict[str, Any]:
    """A queue of the host's, made by a producer (the bullmq package), with one job."""
    queue = Queue("emails", {"connection": redis_url, "prefix": "bull"})
    job = await queue.add("welcome", {"to": "ada@example.com"})
    await queue.close()
    return {"name": "emails", "job_id": str(job.id)}


def _user(username: str, *, staff: bool = True, perms: tuple[str, ...] = ()) -> User:
    user = User.objects.create_user(username, f"{username}@example.com", PASSWORD)
    user.is_staff = staff
    user.save()
    for codename in perms:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label="bullpen", codename=codename)
        )
    return user


@pytest.fixture
def users(transactional_db: None) -> dict[str, User]:
    return {
        "viewer": _user("viewer", perms=("view",)),
        "operator": _user("operator", perms=("operate",)),
        "staff": _user("staff"),
        "customer": _user("customer", staff=False, perms=("view", "operate")),
        "root": User.objects.create_superuser("root", "root@example.com", PASSWORD),
    }
