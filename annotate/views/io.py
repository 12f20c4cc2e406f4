"""Import (upload) and export (download) of answers and claims, for leads."""

from django import forms
from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.urls import path
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods

from annotate.access import project_view
from annotate.importers import FORMATS as IMPORT_FORMATS
from annotate.models import Role
from annotate.services.exports import FORMATS as EXPORT_FORMATS
from annotate.services.exports import claims_export_chunks
from annotate.services.imports import ImportFailed, answers_import

FORMAT_LABELS = {
    "auto": "Tell from the file",
    "native": "FaithAudit (id, question, answer, pile, claims…)",
    "ragas": "RAGAS (user_input, response, retrieved_contexts)",
    "ragchecker": 'RAGChecker ({"results": [...]})',
}
EXPORT_CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
# Room for the multipart envelope around the file itself.
MULTIPART_SLACK = 64 * 1024


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, JSON or CSV, UTF-8.")
    format = forms.ChoiceField(
        choices=[(name, FORMAT_LABELS[name]) for name in IMPORT_FORMATS], initial="auto"
    )


class UploadCapHandler(FileUploadHandler):
    """Stops reading an upload as soon as it passes IMPORT_MAX_UPLOAD_BYTES (no temp file grows)."""

    def __init__(self, request=None):
        super().__init__(request)
        self.received = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > settings.IMPORT_MAX_UPLOAD_BYTES:
            self.exceeded = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        return None


def _too_large_message() -> str:
    return (
        f"The file is larger than the {filesizeformat(settings.IMPORT_MAX_UPLOAD_BYTES)} "
        "upload limit. Nothing was imported; import it on the server with "
        "`python manage.py import_answers`, or split it."
    )


# CSRF is checked inside, after the size checks, so an oversized body is never parsed.
@csrf_exempt
@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def import_answers_view(request, project, membership):
    cap = None
    if request.method == "POST":
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if length > settings.IMPORT_MAX_UPLOAD_BYTES + MULTIPART_SLACK:
            return _import_render(request, project, membership, refused=True, status=413)
        cap = UploadCapHandler(request)
        request.upload_handlers.insert(0, cap)
    return csrf_protect(_import_handle)(request, project, membership, cap)


def _import_handle(request, project, membership, cap: UploadCapHandler | None):
    if request.method == "GET":
        return _import_render(request, project, membership, form=ImportForm())
    form = ImportForm(request.POST, request.FILES)
    if cap is not None and cap.exceeded:
        return _import_render(request, project, membership, refused=True, status=413)
    if not form.is_valid():
        return _import_render(request, project, membership, form=form, status=400)
    try:
        result = answers_import(
            project=project,
            path_or_file=form.cleaned_data["file"],
            format=form.cleaned_data["format"],
            user=request.user,
        )
    except ImportFailed as failed:
        return _import_render(request, project, membership, form=form, failed=failed, status=400)
    return _import_render(request, project, membership, form=ImportForm(), result=result)


def _import_render(request, project, membership, *, status=200, **context):
    template = "annotate/import.html"
    if request.htmx:
        # htmx swaps only 2xx responses; the error list must replace the result region too.
        template, status = "annotate/import.html#import-result", 200
    context.setdefault("form", ImportForm())
    context |= {
        "project": project,
        "membership": membership,
        "max_upload": settings.IMPORT_MAX_UPLOAD_BYTES,
        "too_large_message": _too_large_message(),
    }
    return render(request, template, context, status=status)


@require_GET
@project_view(Role.LEAD)
def export_claims_view(request, project, membership):
    format = request.GET.get("format")
    if format not in EXPORT_FORMATS:
        context = {"project": project, "membership": membership, "unknown_format": format}
        return render(request, "annotate/export.html", context, status=400 if format else 200)
    response = StreamingHttpResponse(
        claims_export_chunks(project=project, format=format),
        content_type=EXPORT_CONTENT_TYPES[format],
    )
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = (
        f'attachment; filename="{project.slug}-claims-{stamp}.{format}"'
    )
    return response


urlpatterns = [
    path("p/<slug:slug>/import/", import_answers_view, name="import"),
    path("p/<slug:slug>/export/", export_claims_view, name="export"),
]
