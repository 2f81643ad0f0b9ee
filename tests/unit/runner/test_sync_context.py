"""A plain-function handler's context after its worker's event loop has closed: the call says
so at once and leaves no coroutine behind that was never run."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from typing import Any

import pytest

from queues.runner import JobContext, SyncJobContext
from queues.runner import context as context_module


def test_progress_after_the_loop_closed_raises_and_leaves_no_unrun_coroutine() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    job: Any = object()  # never reached: the call cannot be scheduled
    context = JobContext("mail", "1", "send", 1, 3, job)
    sync = SyncJobContext(context, loop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="closed"):
            sync.progress(50)
        with pytest.raises(RuntimeError, match="closed"):
            sync.log("a line")
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_a_call_the_loop_never_ran_before_it_closed_times_out_and_leaves_nothing_unrun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(context_module, "_SYNC_CALL_TIMEOUT", 0.2)
    loop = asyncio.new_event_loop()  # never run: as a worker's loop that stopped
    job: Any = object()
    sync = SyncJobContext(JobContext("mail", "1", "send", 1, 3, job), loop)
    raised: list[type[BaseException]] = []  # no traceback kept: it would keep its frames

    def handler() -> None:
        try:
            sync.progress(50)
        except BaseException as error:
            raised.append(type(error))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thread = threading.Thread(target=handler)
        thread.start()
        thread.join(5)
        loop.close()
        gc.collect()
    assert raised == [TimeoutError]
    assert not [w for w in caught if "never awaited" in str(w.message)]
