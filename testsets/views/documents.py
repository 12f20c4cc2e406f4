"""The knowledge base's page: the documents list (members read it), and the upload (leads)."""

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import path
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from annotate.access import project_view
from annotate.models import Role
from testsets.limits import document_limits, setting_name
from testsets.models import Document
from testsets.services.documents import (
    FORMATS,
    DocumentImportError,
    DocumentIssue,
    documents_import,
)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe for `multiple`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class DocumentsUploadForm(forms.Form):
    files = MultipleFileField(
        label="Files",
        help_text=f"{', '.join(sorted(FORMATS))}; UTF-8. A .jsonl holds one document per line: "
        '{"id", "title", "text", "language"}.',
    )
    replace = forms.BooleanField(
        required=False,
        label="Replace the text of a document already stored under the same id",
    )


def _render(request, project, membership, *, form=None, issues=None, status=200):
    documents = (
        Document.objects.filter(project=project)
        .annotate(n_passages=Count("passages"))
        .order_by("external_id")
    )
    context = {
        "project": project,
        "membership": membership,
        "documents": documents,
        "form": form or DocumentsUploadForm(),
        "issues": issues or [],
        "limits": document_limits(),
        "can_upload": membership.role != Role.ANALYST,
    }
    return render(request, "testsets/documents.html", context, status=status)


@require_GET
@project_view(Role.ANALYST)
def documents_view(request, project, membership):
    return _render(request, project, membership)


# CSRF is checked inside, after the size check, so an oversized body is never parsed.
@csrf_exempt
@require_POST
@project_view(Role.LEAD)
def documents_upload_view(request, project, membership):
    most = document_limits().upload_bytes
    if int(request.META.get("CONTENT_LENGTH") or 0) > most:
        issue = DocumentIssue(
            "(upload)",
            None,
            "files",
            f"the upload is larger than {filesizeformat(most)} (operator setting "
            f"{setting_name('upload_bytes')}): upload fewer files at once, or use "
            "`python manage.py import_documents`",
        )
        return _render(request, project, membership, issues=[issue], status=413)
    return csrf_protect(_upload)(request, project, membership)


def _upload(request, project, membership):
    form = DocumentsUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render(request, project, membership, form=form, status=400)
    files = [(f.name, f.read()) for f in form.cleaned_data["files"]]
    try:
        result = documents_import(
            project=project, files=files, replace=form.cleaned_data["replace"]
        )
    except DocumentImportError as exc:
        return _render(request, project, membership, form=form, issues=exc.issues, status=400)
    messages.success(
        request,
        f"{len(result.created)} documents added, {len(result.replaced)} replaced, "
        f"{len(result.unchanged)} unchanged, {len(result.same_text)} not stored again (same "
        f"text as a stored document); {result.passages} passages.",
    )
    return redirect("testsets:documents", project.slug)


urlpatterns = [
    path("p/<slug:slug>/documents/", documents_view, name="documents"),
    path("p/<slug:slug>/documents/upload/", documents_upload_view, name="documents-upload"),
]
