"""The JSON API under ``api/``: reads (GET) and actions (POST)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path

from dashboard.api import actions as act
from dashboard.api import (
    active_job_actions,
    alert_actions,
    group_actions,
    history,
    reads,
    scheduler_actions,
    worker_runner_views,
)
from dashboard.deduplication import views as deduplication
from dashboard.health import views as health
from dashboard.hygiene import views as hygiene
from dashboard.pages import charts, flow_views, triage
from dashboard.pages.converters import DEDUP_ID, JOB_ID, QUEUE, SCHEDULER_ID

# api/queues/<queue>/jobs/<job_id>/
one_job: list[URLPattern | URLResolver] = [
    path("", reads.job, name="api-job"),
    path("flow/", flow_views.flow_api, name="api-flow"),
    path("retry/", act.retry_job, name="retry-job"),
    path("remove/", act.remove_job, name="remove-job"),
    path("promote/", act.promote_job, name="promote-job"),
    path("cancel/", act.cancel_job, name="cancel-job"),
    path("data/", act.update_data, name="update-data"),
    path("duplicate/", act.duplicate_job, name="duplicate-job"),
    path("priority/", act.change_priority, name="change-priority"),
    path("reschedule/", act.reschedule_job, name="reschedule-job"),
    path(
        "remove-unprocessed-children/",
        act.remove_unprocessed_children,
        name="remove-unprocessed-children",
    ),
    path("replay/", worker_runner_views.replay, name="replay"),
    path("detach/", act.detach_child, name="detach-child"),
    path("move-to-failed/", active_job_actions.move_to_failed, name="move-to-failed"),
    path("move-to-wait/", active_job_actions.move_to_wait, name="move-to-wait"),
]

# api/queues/<queue>/schedulers/<scheduler_id>/
one_scheduler: list[URLPattern | URLResolver] = [
    path("run/", scheduler_actions.run_now, name="run-scheduler"),
    path("remove/", act.remove_scheduler, name="remove-scheduler"),
]

# api/queues/<queue>/
one_queue: list[URLPattern | URLResolver] = [
    path("jobs/", reads.jobs_list, name="api-jobs"),
    path(f"jobs/{JOB_ID}/", include(one_job)),
    path("failure-groups/", triage.groups_api, name="api-groups"),
    path("failure-groups/retry/", triage.retry_group, name="retry-group"),
    path("failure-groups/remove/", triage.remove_group, name="remove-group"),
    path("workers/", triage.workers_api, name="api-workers"),
    path("throughput/", charts.throughput_api, name="api-throughput"),
    path("history/", history.history_api, name="api-history"),
    path("history/names/", history.names_api, name="api-history-names"),
    path("schedulers/", scheduler_actions.schedulers, name="api-schedulers"),
    path(f"schedulers/{SCHEDULER_ID}/", include(one_scheduler)),
    path("deduplication/", deduplication.keys_api, name="api-deduplication"),
    path(
        "deduplication/release-orphans/",
        deduplication.release_orphans,
        name="release-dedup-orphans",
    ),
    path(f"deduplication/{DEDUP_ID}/release/", deduplication.release, name="release-dedup"),
    path(
        "dead-letters/drop-completed/",
        worker_runner_views.drop_completed,
        name="drop-completed-dead-letters",
    ),
    path("info/", hygiene.info_api, name="api-queue-info"),
    # Actions on the whole queue (POST)
    path("retry/", act.retry_all, name="retry-all"),
    path("promote/", act.promote_all, name="promote-all"),
    path("clean/", act.clean, name="clean"),
    path("pause/", act.pause, name="pause"),
    path("resume/", act.resume, name="resume"),
    path("empty/", act.empty, name="empty"),
    path("obliterate/", act.obliterate, name="obliterate"),
    path("add/", act.add_job, name="add-job"),
    path("bulk/", act.bulk, name="bulk"),
    path("concurrency/", act.set_concurrency, name="concurrency"),
    path("rate-limit/", act.set_rate_limit, name="rate-limit"),
    path("rate-limit/release/", act.release_rate_limit, name="release-rate-limit"),
    path("alerts/<str:rule>/silence/", alert_actions.silence, name="silence-alert"),
    path("alerts/<str:rule>/unsilence/", alert_actions.unsilence, name="unsilence-alert"),
    path("alerts/<str:rule>/acknowledge/", alert_actions.acknowledge, name="acknowledge-alert"),
]

urlpatterns = [
    path("queues/", reads.queues_list, name="api-queues"),
    path(f"queues/{QUEUE}/", include(one_queue)),
    path("find/", triage.find_api, name="api-find"),
    path("alerts/", triage.alerts_api, name="api-alerts"),
    # Actions on many queues (POST)
    path("pause-all/", act.pause_all, name="pause-all"),
    path("resume-all/", act.resume_all, name="resume-all"),
    path("groups/pause/", group_actions.pause, name="group-pause"),
    path("groups/resume/", group_actions.resume, name="group-resume"),
    path("groups/retry/", group_actions.retry_failed, name="group-retry"),
    path("redis/", health.redis_api, name="api-redis"),
]
