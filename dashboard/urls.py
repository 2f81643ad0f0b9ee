"""Bullpen's URLs. Mount with ``path("queues/", include("dashboard.urls"))`` (any prefix works)."""

from __future__ import annotations

from django.urls import path, register_converter

from dashboard.api import actions as act
from dashboard.api import group_actions, metrics, reads, scheduler_actions, worker_runner_views
from dashboard.auth import account_views
from dashboard.bulk import api as bg
from dashboard.bulk import clean_question
from dashboard.pages import charts, flow_views, triage, views
from dashboard.pages import switcher as go
from dashboard.pages.converters import ActionIdConverter, NameConverter
from dashboard.pages.not_found import not_found
from dashboard.search import all_queues_api, match_actions, queue_api, results_page

register_converter(NameConverter, "bullpen_name")
register_converter(ActionIdConverter, "action_id")

app_name = "bullpen"
JOB = "api/queues/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("rows/", views.overview_rows, name="overview-rows"),
    path("q/<bullpen_name:queue>/", views.queue_page, name="queue"),
    path("q/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/", views.job_page, name="job"),
    path(
        "q/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/edit-data/",
        views.edit_data_form,
        name="edit-data-form",
    ),
    # No trailing slash: browsers then reuse the credentials for everything under the mount.
    path("sign-in", account_views.sign_in, name="sign-in"),
    path("sign-out", account_views.sign_out, name="sign-out"),
    path("audit/", account_views.audit_log, name="audit"),
    path("find/", triage.find_page, name="find"),
    path("search/", results_page.search_page, name="search"),
    path("api/search/", all_queues_api.search_all, name="api-search-all"),
    path("go/", go.go_to_queue, name="go"),
    path("go/suggestions/", go.suggestions, name="go-suggestions"),
    path("metrics", metrics.metrics, name="metrics"),
    path("q/<bullpen_name:queue>/groups/", triage.groups_fragment, name="groups"),
    path("q/<bullpen_name:queue>/clean/", clean_question.clean_confirm, name="clean-question"),
    path("q/<bullpen_name:queue>/workers/", triage.workers_fragment, name="workers"),
    path("api/find/", triage.find_api, name="api-find"),
    path("api/alerts/", triage.alerts_api, name="api-alerts"),
    path("api/queues/<bullpen_name:queue>/failure-groups/", triage.groups_api, name="api-groups"),
    path(
        "api/queues/<bullpen_name:queue>/failure-groups/retry/",
        triage.retry_group,
        name="retry-group",
    ),
    path(
        "api/queues/<bullpen_name:queue>/failure-groups/remove/",
        triage.remove_group,
        name="remove-group",
    ),
    path("api/queues/<bullpen_name:queue>/workers/", triage.workers_api, name="api-workers"),
    path("api/queues/<bullpen_name:queue>/search/", queue_api.search_api, name="api-search"),
    path(
        "api/queues/<bullpen_name:queue>/search/<slug:action>/",
        match_actions.search_action,
        name="search-action",
    ),
    path(
        "api/queues/<bullpen_name:queue>/throughput/", charts.throughput_api, name="api-throughput"
    ),
    path("q/<bullpen_name:queue>/throughput/", charts.throughput_fragment, name="throughput"),
    path(
        "q/<bullpen_name:queue>/schedulers/",
        worker_runner_views.schedulers_fragment,
        name="schedulers",
    ),
    path(
        "api/queues/<bullpen_name:queue>/schedulers/",
        scheduler_actions.schedulers,
        name="api-schedulers",
    ),
    path(
        "api/queues/<bullpen_name:queue>/schedulers/<bullpen_name:scheduler_id>/run/",
        scheduler_actions.run_now,
        name="run-scheduler",
    ),
    path(f"{JOB}replay/", worker_runner_views.replay, name="replay"),
    path(
        "api/queues/<bullpen_name:queue>/dead-letters/drop-completed/",
        worker_runner_views.drop_completed,
        name="drop-completed-dead-letters",
    ),
    path(f"{JOB}flow/", flow_views.flow_api, name="api-flow"),
    path(
        "q/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/flow/",
        flow_views.flow_fragment,
        name="flow-tree",
    ),
    path("api/queues/", reads.queues_list, name="api-queues"),
    path("api/queues/<bullpen_name:queue>/jobs/", reads.jobs_list, name="api-jobs"),
    path("api/queues/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/", reads.job, name="api-job"),
    # Actions (POST)
    path("api/pause-all/", act.pause_all, name="pause-all"),
    path("api/resume-all/", act.resume_all, name="resume-all"),
    path("api/groups/pause/", group_actions.pause, name="group-pause"),
    path("api/groups/resume/", group_actions.resume, name="group-resume"),
    path("api/groups/retry/", group_actions.retry_failed, name="group-retry"),
    path("api/queues/<bullpen_name:queue>/retry/", act.retry_all, name="retry-all"),
    path("api/queues/<bullpen_name:queue>/promote/", act.promote_all, name="promote-all"),
    path("api/queues/<bullpen_name:queue>/clean/", act.clean, name="clean"),
    path("api/queues/<bullpen_name:queue>/pause/", act.pause, name="pause"),
    path("api/queues/<bullpen_name:queue>/resume/", act.resume, name="resume"),
    path("api/queues/<bullpen_name:queue>/empty/", act.empty, name="empty"),
    path("api/queues/<bullpen_name:queue>/obliterate/", act.obliterate, name="obliterate"),
    path("api/queues/<bullpen_name:queue>/add/", act.add_job, name="add-job"),
    path("api/queues/<bullpen_name:queue>/bulk/", act.bulk, name="bulk"),
    path(
        "api/queues/<bullpen_name:queue>/schedulers/<bullpen_name:scheduler_id>/remove/",
        act.remove_scheduler,
        name="remove-scheduler",
    ),
    # Bulk actions running in the background
    path("api/actions/", bg.actions_list, name="api-actions"),
    path("api/actions/<action_id:action_id>/", bg.action_status, name="api-action"),
    path("api/actions/<action_id:action_id>/cancel/", bg.cancel_action, name="cancel-action"),
    path(f"{JOB}retry/", act.retry_job, name="retry-job"),
    path(f"{JOB}remove/", act.remove_job, name="remove-job"),
    path(f"{JOB}promote/", act.promote_job, name="promote-job"),
    path(f"{JOB}data/", act.update_data, name="update-data"),
    path(f"{JOB}duplicate/", act.duplicate_job, name="duplicate-job"),
    path(f"{JOB}priority/", act.change_priority, name="change-priority"),
    path(f"{JOB}reschedule/", act.reschedule_job, name="reschedule-job"),
    path(
        f"{JOB}remove-unprocessed-children/",
        act.remove_unprocessed_children,
        name="remove-unprocessed-children",
    ),
    path("api/queues/<bullpen_name:queue>/concurrency/", act.set_concurrency, name="concurrency"),
    path("api/queues/<bullpen_name:queue>/rate-limit/", act.set_rate_limit, name="rate-limit"),
    path(
        "api/queues/<bullpen_name:queue>/rate-limit/release/",
        act.release_rate_limit,
        name="release-rate-limit",
    ),
    # Last: any other path under the mount gets the dashboard's 404 (JSON under api/).
    path("<path:rest>", not_found, name="not-found"),
]
