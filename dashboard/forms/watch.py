"""A page's message on its live websocket: what it watches from now on (and, for a queue page,
which list it shows). Refusals are said to the page as ``{"type": "error"}``; the socket stays.
Whether the queue exists is the consumer's to ask Redis; this form bounds what it is given."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from dashboard.forms.fields import MAX_ID, ChoiceTextField, SharedField, TextField
from dashboard.forms.reads import JobPageForm
from dashboard.pages import overview_list
from queues.config.settings import get_config
from queues.errors import BadParameter
from queues.reads.listing import validate_page

# "" and "status": nothing more than the status every socket gets.
WATCHES = ("", "status", "overview", "queue", "job")
MAX_VIEWER_TOKEN = 200  # characters of the signed viewer kind a page sends
MAX_SHOWN = 500  # rows one overview page shows at most


class FlagField(SharedField):
    """A JSON true or false; missing: false."""

    def to_python(self, value: Any) -> bool:
        if value in (None, ""):
            return False
        if not isinstance(value, bool):
            raise ValidationError("%(name)s must be true or false", code="invalid")
        return value


class NamesField(SharedField):
    """A JSON list of at most ``most`` queue names; missing: none."""

    def __init__(self, *, most: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.most = most

    def to_python(self, value: Any) -> list[str]:
        if value in (None, ""):
            return []
        if not isinstance(value, list) or len(value) > self.most:
            raise ValidationError(
                f"%(name)s must be a list of at most {self.most} queue names", code="invalid"
            )
        if not all(isinstance(name, str) and 0 < len(name) <= MAX_ID for name in value):
            raise ValidationError("%(name)s must hold queue names", code="invalid")
        return list(dict.fromkeys(value))


class ListedField(SharedField):
    """A JSON count of queues, 0 or more; missing: None."""

    def to_python(self, value: Any) -> int | None:
        if value is None or value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError("%(name)s must be a count of queues (0 or more)", code="invalid")
        return value


class WatchForm(JobPageForm):
    """``{"reset": true}`` drops the socket's watches; ``{"watch": "overview"}``, ``{"watch":
    "queue", "queue": <name>, "state", "page", "per_page", "order"}`` or ``{"watch": "job",
    "queue": <name>, "id": <job id>, "flow": true}`` adds one (``flow``: with the jobs of
    its flow tree); ``viewer`` is the page's signed viewer kind; ``since`` the version of the
    counts the page shows, when it was rendered from the live readers' counts; ``list_at``, on
    a queue page, the reader's position in the queue's events when its list was read.
    An overview also says which queues' rows it shows (``shown``), sent again when they change,
    and how its list groups them (``group``, ``delimiter``): each queue's group comes with its
    counts, as the server decides it. An overview page says too how many queues its list
    counts (``listed``) and which groups it shows (``groups``): it is then sent its live parts
    rendered by the server (dashboard/live/overview_parts.py) instead of the counts."""

    reset = FlagField()
    viewer = TextField(longest=MAX_VIEWER_TOKEN)
    watch = ChoiceTextField(WATCHES, "%(name)s must be one of: overview, queue, job")
    queue = TextField()  # at most fields.MAX_ID characters, as in the HTTP routes
    id = TextField()
    shown = NamesField(most=MAX_SHOWN)
    groups = NamesField(most=MAX_SHOWN)
    listed = ListedField()
    # A job page showing the job's flow: the jobs of its tree are watched too.
    flow = FlagField()
    group = ChoiceTextField(
        overview_list.GROUPINGS, "%(name)s must be one of: head, tail, prefix, connection"
    )
    delimiter = TextField(longest=5)
    # The version of the counts the page was rendered with (``era:sequence`` per live reader):
    # only what changed after is sent.
    since = TextField(longest=1000)
    # Where the reader stood in the queue's events when the page's list was read: with no
    # event since, the list the page shows is still Redis's and is not read again.
    list_at = TextField(longest=100)

    def clean_delimiter(self) -> str:
        return str(self.cleaned_data["delimiter"] or get_config()["GROUP_DELIMITER"])

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        watch = found.get("watch")
        if watch in ("queue", "job") and not found.get("queue"):
            raise ValidationError("%(name)s needs a queue", params={"name": f"watch {watch}"})
        if watch == "job" and not found.get("id"):
            raise ValidationError("%(name)s needs a job id", params={"name": "watch job"})
        if watch == "queue" and not self.errors:
            try:  # the list the page shows: the same ranges as the job list's own
                validate_page(found["state"], found["page"], found["per_page"], found["order"])
            except BadParameter as error:
                raise ValidationError("%(problem)s", params={"problem": str(error)}) from None
        return found
