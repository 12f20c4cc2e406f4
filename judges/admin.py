from django.contrib import admin

from judges.models import Canary, Judge, JudgeFailure, JudgeRun, JudgeVerdict, SplitJob


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "backend", "model", "endpoint", "prompt_version"]
    list_filter = ["backend", "project"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "judge", "kind", "status", "done", "failed", "unparseable", "total"]
    list_filter = ["status", "kind"]
    raw_id_fields = ["judge", "project", "created_by"]


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
    list_display = ["run", "claim", "canary", "verdict", "confidence", "latency_ms"]
    list_filter = ["verdict"]
    raw_id_fields = ["run", "claim", "canary"]


@admin.register(Canary)
class CanaryAdmin(admin.ModelAdmin):
    list_display = ["project", "source", "text"]
    raw_id_fields = ["project", "pile_answer", "source_claim"]


@admin.register(JudgeFailure)
class JudgeFailureAdmin(admin.ModelAdmin):
    list_display = ["run", "claim", "canary", "error"]
    raw_id_fields = ["run", "claim", "canary"]


@admin.register(SplitJob)
class SplitJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "judge", "status", "done", "failed", "total", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["project", "judge", "answer", "created_by"]
