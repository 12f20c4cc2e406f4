from django.urls import path

from metrics.views import compare, dashboard, design, downloads, rollups
from metrics.views import judge_compare as views_judge_compare

app_name = "metrics"

urlpatterns = [
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/",
        views_judge_compare.judge_versions,
        name="judge-versions",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/split/",
        views_judge_compare.gold_split,
        name="gold-split",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/new/",
        views_judge_compare.version_create,
        name="judge-version-create",
    ),
    path(
        "p/<slug:slug>/judges/compare/",
        views_judge_compare.judge_compare_page,
        name="judge-compare",
    ),
    path("p/<slug:slug>/dashboard/", dashboard.dashboard, name="dashboard"),
    path("p/<slug:slug>/dashboard/recompute/", dashboard.recompute, name="recompute"),
    path("p/<slug:slug>/dashboard/at-scale/", rollups.rollups_page, name="rollups"),
    path(
        "p/<slug:slug>/dashboard/at-scale/refresh/",
        rollups.rollups_refresh,
        name="rollups-refresh",
    ),
    path(
        "p/<slug:slug>/dashboard/snapshots/<int:snapshot_id>/progress/",
        dashboard.snapshot_progress,
        name="snapshot-progress",
    ),
    path("p/<slug:slug>/dashboard/report.json", downloads.report_download, name="report-download"),
    path("p/<slug:slug>/dashboard/audit-card/", downloads.audit_card_download, name="audit-card"),
    path(
        "p/<slug:slug>/dashboard/audit-card/page/",
        downloads.audit_card_page,
        name="audit-card-page",
    ),
    path("glossary/", dashboard.glossary, name="glossary"),
    path("p/<slug:slug>/compare/", compare.compare, name="compare"),
    path(
        "p/<slug:slug>/compare/pairwise-run/",
        compare.compare_pairwise_run,
        name="compare-pairwise-run",
    ),
    path(
        "p/<slug:slug>/dashboard/selective-routing/",
        design.selective_routing,
        name="selective-routing",
    ),
    path("p/<slug:slug>/queue-design/", design.queue_design, name="queue-design"),
]
