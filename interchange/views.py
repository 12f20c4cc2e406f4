"""Import (upload) and export (download) of answers and claims, for leads."""

from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import path, reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.forms import AnswerFilterForm
from annotate.models import ImportJob, Role
from annotate.selectors import answers_filtered
from interchange.importers import FORMATS as IMPORT_FORMATS
from interchange.importers.issues import ImportFailed
from interchange.importers.preferences import FORMATS as PREFERENCE_FORMATS
from interchange.importers.preferences import RAGCHECKER_ASPECTS
from interchange.importers.systems import system_from_option
from interchange.services.exports import FORMATS as EXPORT_FORMATS
from interchange.services.exports import claims_export_chunks
from interchange.services.import_jobs import (
    import_job_can_retry,
    import_job_get_for_project,
    import_job_is_stale,
    import_job_retry,
    import_job_start,
    import_jobs_recent,
)
from interchange.services.imports import AnnotatorMapError, annotator_map_check, annotator_map_parse
from interchange.services.preference_imports import preferences_import

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
    annotator_map = forms.CharField(
        label="Map annotator names to members (owners only)",
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "c.smith = carol"}),
        help_text="One name = username per line. The file's labels are kept under its "
        "annotator names as imported annotators (shown as “name (imported)”); a name mapped "
        "here is filed under that member's account instead. Only members of this project "
        "can be mapped; an import never creates accounts or adds members.",
    )

    system = forms.CharField(
        label="System (optional)",
        required=False,
        max_length=201,
        widget=forms.TextInput(attrs={"placeholder": "rag@2"}),
        help_text="NAME or NAME@VERSION of the pipeline that produced these answers (for "
        "answers that name none). A RAGAS or RAGChecker id is then the question key, so "
        "two systems' files of the same questions can be compared.",
    )

    def __init__(self, *args, project=None, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project, self.user = project, user

    def clean_system(self) -> str:
        text = self.cleaned_data["system"].strip()
        if text:
            try:
                system_from_option(text)
            except ValueError as error:
                raise forms.ValidationError(str(error)) from error
        return text

    def clean_annotator_map(self) -> dict[str, str]:
        try:
            mapping = annotator_map_parse(self.cleaned_data["annotator_map"])
            annotator_map_check(project=self.project, annotator_map=mapping, user=self.user)
        except AnnotatorMapError as error:
            raise forms.ValidationError(str(error)) from error
        return mapping


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
    form = ImportForm(request.POST, request.FILES, project=project, user=request.user)
    if cap is not None and cap.exceeded:
        return _import_render(request, project, membership, refused=True, status=413)
    if not form.is_valid():
        return _import_render(request, project, membership, form=form, status=400)
    job = import_job_start(
        project=project,
        user=request.user,
        file=form.cleaned_data["file"],
        format=form.cleaned_data["format"],
        annotator_map=form.cleaned_data["annotator_map"],
        system=form.cleaned_data["system"],
    )
    return _import_render(request, project, membership, job=job, status=_job_status(job))


def _job_status(job: ImportJob) -> int:
    """A plain form post gets an honest status: imported (200), waiting for a worker (202),
    errors in the file (400), or the queue or the job itself failed (503)."""
    if job.status == ImportJob.Status.DONE:
        return 200
    if job.status != ImportJob.Status.FAILED:
        return 202
    return 400 if job.errors else 503


def _import_render(request, project, membership, *, status=200, **context):
    template = "annotate/import.html"
    if request.htmx:
        # htmx swaps only 2xx responses; the error list must replace the result region too.
        template, status = "annotate/import.html#import-result", 200
    context.setdefault("form", ImportForm())
    if context.get("job") is not None:
        context |= _job_context(context["job"])
    context |= {
        "project": project,
        "membership": membership,
        "max_upload": settings.IMPORT_MAX_UPLOAD_BYTES,
        "too_large_message": _too_large_message(),
        "recent_jobs": import_jobs_recent(project=project),
    }
    return render(request, template, context, status=status)


def _job_context(job: ImportJob) -> dict:
    return {"job": job, "stale": import_job_is_stale(job), "can_retry": import_job_can_retry(job)}


@require_GET
@project_view(Role.LEAD)
def import_job_view(request, project, membership, import_job_id: int):
    """One import; htmx polls its region every second and stops once the job has finished."""
    job = import_job_get_for_project(project=project, job_id=import_job_id)
    context = {"project": project, "membership": membership, **_job_context(job)}
    if not request.htmx:
        return render(request, "annotate/import_job.html", context)
    response = render(request, "annotate/import_job.html#import-job", context)
    if job.finished:
        return HttpResponseStopPolling(response.content)
    return response


@require_POST
@project_view(Role.LEAD)
def import_job_retry_view(request, project, membership, import_job_id: int):
    """Start again a job the queue or a dead worker lost (its file was kept)."""
    job = import_job_get_for_project(project=project, job_id=import_job_id)
    if not import_job_retry(job=job):
        messages.warning(request, "This import cannot be started again: upload the file anew.")
    return redirect("annotate:import-job", project.slug, job.pk)


# The answers list's filter fields (annotate.forms.AnswerFilterForm; "sort" orders, not filters).
ANSWER_FILTERS = {"q", "risk", "system", "gold", "disagreement", "review", "verdict"}


@require_GET
@project_view(Role.LEAD)
def export_claims_view(request, project, membership):
    format = request.GET.get("format")
    if format not in EXPORT_FORMATS:
        context = {"project": project, "membership": membership, "unknown_format": format}
        return render(request, "annotate/export.html", context, status=400 if format else 200)
    among = None
    if set(request.GET) & ANSWER_FILTERS:  # from the answers list: its filtered set only
        filters = AnswerFilterForm(request.GET, project=project)
        if not filters.is_valid():
            context = {
                "project": project,
                "membership": membership,
                "filter_errors": filters.errors,
            }
            return render(request, "annotate/export.html", context, status=400)
        among = answers_filtered(project=project, **filters.filters()).values("pk")
    response = StreamingHttpResponse(
        claims_export_chunks(project=project, format=format, among=among),
        content_type=EXPORT_CONTENT_TYPES[format],
    )
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = content_disposition_header(
        True, f"{slugify(project.slug)}-claims-{stamp}.{format}"
    )
    return response


PREFERENCE_FORMAT_LABELS = {
    "auto": "Tell from the file",
    "native": "FaithAudit (question_id, system_a, system_b, annotator, preference, strength)",
    "ragchecker": "RAGChecker human study (query_id, model1, model2, overall_label)",
}
# How many of a refused file's problems the page lists; the rest are counted.
PROBLEMS_SHOWN = 10


class PreferencesImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, JSON or CSV, UTF-8.")
    format = forms.ChoiceField(
        choices=[(name, PREFERENCE_FORMAT_LABELS[name]) for name in PREFERENCE_FORMATS],
        initial="auto",
    )
    aspect = forms.ChoiceField(
        choices=[(name, name.replace("_label", "")) for name in RAGCHECKER_ASPECTS],
        initial="overall_label",
        help_text="RAGChecker files: which of the three −2..2 grades to read.",
    )
    a = forms.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    b = forms.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    judge = forms.CharField(required=False, max_length=40)


@require_POST
@project_view(Role.LEAD)
def import_preferences_view(request, project, membership):
    """Upload people's pairwise preferences (the compare page's form); back to the comparison
    of the same two systems with what was imported, or every problem by line and field."""
    form = PreferencesImportForm(request.POST, request.FILES)
    back = reverse("metrics:compare", args=[project.slug])
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect(back)
    data = form.cleaned_data
    query = {key: data[key] for key in ("a", "b", "judge") if data.get(key)}
    if query:
        back += "?" + urlencode(query)
    try:
        result = preferences_import(
            project=project,
            path_or_file=data["file"],
            format=data["format"],
            aspect=data["aspect"],
        )
    except ImportFailed as failed:
        shown = failed.issues[:PROBLEMS_SHOWN]
        more = len(failed.issues) - len(shown)
        messages.error(
            request,
            f"Nothing was imported: {len(failed.issues)} problem(s) in the file"
            + (" (it stopped there)" if failed.truncated else "")
            + ". "
            + " · ".join(str(issue) for issue in shown)
            + (f" · and {more} more" if more else ""),
        )
        return redirect(back)
    messages.success(request, f"Imported {result}")
    return redirect(back)


urlpatterns = [
    path("p/<slug:slug>/import/", import_answers_view, name="import"),
    path("p/<slug:slug>/import/<int:import_job_id>/", import_job_view, name="import-job"),
    path(
        "p/<slug:slug>/import/<int:import_job_id>/retry/",
        import_job_retry_view,
        name="import-job-retry",
    ),
    path("p/<slug:slug>/export/", export_claims_view, name="export"),
    path(
        "p/<slug:slug>/import/preferences/",
        import_preferences_view,
        name="import-preferences",
    ),
]
