from django.contrib import admin

from metrics.models import ReportSnapshot


@admin.register(ReportSnapshot)
class ReportSnapshotAdmin(admin.ModelAdmin):
    list_display = ["project", "judge", "status", "computed_at", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["project", "judge"]
