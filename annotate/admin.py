from django import forms
from django.contrib import admin

from annotate.forms import ProjectTextsLimited
from annotate.models import (
    Answer,
    Claim,
    EvidenceSpan,
    Fact,
    Gold,
    ImportJob,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Reservation,
)
from annotate.services.projects import project_answers_recount


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


class ProjectAdminForm(ProjectTextsLimited, forms.ModelForm):
    class Meta:
        model = Project
        fields = "__all__"  # noqa: DJ007 - the admin edits every field


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    form = ProjectAdminForm
    list_display = ["name", "slug", "analysts_per_claim", "double_labelled_share", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role"]
    list_filter = ["role", "project"]
    raw_id_fields = ["user", "project"]


class PassageInline(admin.StackedInline):
    model = Passage
    extra = 0


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "risk_category", "answerable", "abstention"]
    list_filter = ["project", "risk_category", "abstention"]
    search_fields = ["external_id", "question"]
    inlines = [PassageInline]

    # Answers added or deleted here bypass the import, which keeps the project's answer count.
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        project_answers_recount(project_ids=[obj.project_id, form.initial.get("project")])

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        project_answers_recount(project_ids=[obj.project_id])

    def delete_queryset(self, request, queryset):
        project_ids = list(queryset.values_list("project_id", flat=True).distinct())
        super().delete_queryset(request, queryset)
        project_answers_recount(project_ids=project_ids)


@admin.register(Passage)
class PassageAdmin(admin.ModelAdmin):
    list_display = ["answer", "rank", "source_id", "title"]
    raw_id_fields = ["answer"]
    search_fields = ["source_id", "title"]


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["id", "answer", "position", "origin", "needs_review", "text"]
    list_filter = ["project", "origin", "needs_review"]
    raw_id_fields = ["answer", "project", "cited_passages"]
    search_fields = ["text"]


class EvidenceSpanInline(admin.TabularInline):
    """A label's spans after the first, read only: `label_save` verifies them."""

    model = EvidenceSpan
    extra = 0
    can_delete = False
    readonly_fields = ["number", "passage", "start", "end", "quote"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["claim", "annotator", "verdict", "updated_at"]
    list_filter = ["verdict"]
    raw_id_fields = ["claim", "annotator", "evidence_passage"]
    inlines = [EvidenceSpanInline]


@admin.register(LabelHistory)
class LabelHistoryAdmin(admin.ModelAdmin):
    list_display = ["claim", "annotator", "action", "verdict", "changed_at"]
    raw_id_fields = ["claim", "annotator"]


@admin.register(Gold)
class GoldAdmin(admin.ModelAdmin):
    list_display = ["claim", "verdict", "source", "decided_by", "decided_at"]
    list_filter = ["verdict", "source"]
    raw_id_fields = ["claim", "decided_by"]


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ["answer", "passage", "start", "end", "text"]
    raw_id_fields = ["answer", "passage", "created_by"]


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    list_display = ["claim", "user", "expires_at"]
    raw_id_fields = ["claim", "user"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """For data fixes and for a failed job's file (kept under MEDIA_ROOT/imports/)."""

    list_display = ["id", "project", "file_name", "status", "answers_checked", "created_at"]
    list_filter = ["status", "project"]
    search_fields = ["file_name"]
    raw_id_fields = ["project", "created_by"]
    readonly_fields = ["created_at", "started_at", "finished_at", "heartbeat_at", "lease_owner"]

    def delete_model(self, request, obj):
        obj.file.delete(save=False)  # a failed job's kept file goes with it
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for job in queryset:
            job.file.delete(save=False)
        super().delete_queryset(request, queryset)
