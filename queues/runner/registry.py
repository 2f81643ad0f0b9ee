"""How a job handler gets registered: a queue name mapped to a plain function of the payload.

Either with the decorator, in a module the runner imports (``BULLPEN["WORKER"]["modules"]`` or
``runqueueworker --module``)::

    from queues.runner import job_handler, Limiter

    @job_handler("documents", concurrency=4, limiter=Limiter(max=10, duration_ms=1000))
    async def analyze(payload, ctx):
        await ctx.progress(50)
        return {"pages": payload["pages"]}

or in settings, by dotted path: ``BULLPEN["WORKER"]["handlers"] = {"email": "app.jobs.send"}``
(or ``{"email": {"handler": "app.jobs.send", "concurrency": 10}}``).

A handler takes the job's payload, and optionally a second argument, the job context (progress,
log lines, attempt number). ``async def`` handlers run on the event loop; plain functions run in
a thread, so blocking code (Django's ORM or e-mail backends, Pillow) is fine there. What a
handler returns (JSON) is the job's return value; what it raises fails the attempt.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.utils.module_loading import import_string

from queues.runner.errors import RunnerConfigError
from queues.runner.options import QueueOptions
from queues.runner.schedules import Schedule
from queues.runner.settings import worker_config

Handler = Callable[..., Any]
F = TypeVar("F", bound=Handler)


@dataclass(frozen=True)
class HandlerSpec:
    queue: str
    func: Handler
    options: QueueOptions
    schedules: tuple[Schedule, ...] = ()
    is_async: bool = field(init=False)
    wants_context: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.func))
        object.__setattr__(self, "wants_context", _takes_context(self.queue, self.func))

    @property
    def path(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"


def _takes_context(queue: str, func: Handler) -> bool:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError) as error:
        raise RunnerConfigError(f"Handler for {queue!r} is not a function: {func!r}") from error
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        if len(required) > 2:
            raise RunnerConfigError(
                f"Handler {func.__qualname__} for {queue!r} takes (payload) or (payload, ctx)"
            )
        return True
    if len(positional) == 1:
        return False
    raise RunnerConfigError(
        f"Handler {getattr(func, '__qualname__', func)!r} for {queue!r} must take the job "
        "payload as its first argument: def handler(payload) or def handler(payload, ctx)"
    )


class Registry:
    """Handlers by queue name."""

    def __init__(self) -> None:
        self._specs: dict[str, HandlerSpec] = {}

    def register(
        self,
        queue: str,
        func: Handler,
        options: QueueOptions | None = None,
        *,
        schedules: Iterable[Schedule] = (),
        **option_values: Any,
    ) -> HandlerSpec:
        if not queue or ":" in queue:
            raise RunnerConfigError(f"Queue name {queue!r} must be non-empty, without ':'")
        try:
            opts = (options or QueueOptions()).with_changes(**option_values)
        except (RunnerConfigError, TypeError) as error:
            raise RunnerConfigError(f"Queue {queue!r}: {error}") from error
        spec = HandlerSpec(queue, func, opts, tuple(schedules))
        known = self._specs.get(queue)
        if known is not None and known.path != spec.path:
            raise RunnerConfigError(
                f"Queue {queue!r} already has handler {known.path}; cannot add {spec.path}"
            )
        self._specs[queue] = spec
        return spec

    def handler(
        self,
        queue: str,
        options: QueueOptions | None = None,
        *,
        schedules: Iterable[Schedule] = (),
        **option_values: Any,
    ) -> Callable[[F], F]:
        def decorate(func: F) -> F:
            self.register(queue, func, options, schedules=schedules, **option_values)
            return func

        return decorate

    def get(self, queue: str) -> HandlerSpec:
        try:
            return self._specs[queue]
        except KeyError:
            known = ", ".join(sorted(self._specs)) or "none"
            raise RunnerConfigError(
                f"No handler registered for queue {queue!r} (registered: {known})"
            ) from None

    def options_for(self, queue: str) -> QueueOptions:
        spec = self._specs.get(queue)
        return spec.options if spec is not None else QueueOptions()

    def __contains__(self, queue: object) -> bool:
        return queue in self._specs

    def __iter__(self) -> Iterator[HandlerSpec]:
        return iter(sorted(self._specs.values(), key=lambda spec: spec.queue))

    def __len__(self) -> int:
        return len(self._specs)


# The registry the decorator below and ``runqueueworker`` use.
default_registry = Registry()


def job_handler(
    queue: str,
    options: QueueOptions | None = None,
    *,
    schedules: Iterable[Schedule] = (),
    **option_values: Any,
) -> Callable[[F], F]:
    """Register the decorated function as the handler of ``queue`` (see the module docstring)."""
    return default_registry.handler(queue, options, schedules=schedules, **option_values)


def load_handlers(registry: Registry, extra_modules: Iterable[str] = ()) -> Registry:
    """Import the configured handler modules and add the handlers named in settings."""
    config = worker_config()
    for module in [*config["modules"], *extra_modules]:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise RunnerConfigError(f"Cannot import handler module {module!r}: {error}") from error
    for queue, entry in dict(config["handlers"]).items():
        if isinstance(entry, str):
            path, values = entry, {}
        elif isinstance(entry, dict) and isinstance(entry.get("handler"), str):
            values = {key: value for key, value in entry.items() if key != "handler"}
            path = entry["handler"]
        else:
            raise RunnerConfigError(
                f'WORKER["handlers"][{queue!r}] must be a dotted path or {{"handler": path, ...}}'
            )
        try:
            func = import_string(path)
        except ImportError as error:
            raise RunnerConfigError(f"Cannot import handler {path!r}: {error}") from error
        options = QueueOptions.from_mapping(values)
        registry.register(queue, func, options)
    return registry
