"""The report's and the audit card's downloads, and the audit card's page."""

import io
import json

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from annotate.access import project_view
from annotate.csv_safe import NeutralCsvWriter
from annotate.models import Role
from metrics import selectors
from metrics.scope import Scope, judge_from, judge_param
from metrics.services import audit_card, audit_card_rows, report_public
from metrics.services.audit_card import AUDIT_CARD_CSV_HEADER
from metrics.services.audit_card_text import audit_card_markdown, audit_card_readable


class AuditCardForm(forms.Form):
    judge = forms.CharField(required=False)
    system = forms.CharField(required=False)
    instrument = forms.IntegerField(required=False, min_value=0)
    format = forms.ChoiceField(
        choices=[("json", "JSON"), ("csv", "CSV"), ("md", "Markdown")], required=False
    )


def _attachment(project, judge, kind: str, extension: str, scope: Scope | None = None) -> str:
    """The Content-Disposition of a download: a file name of slugs only (a judge's name is
    free text: quotes, dots or line breaks in it must not name the file or break the header);
    a report of one system of several, or of all of them, says which."""
    which = ""
    if scope is not None and scope.several:
        system = scope.system
        which = "all-systems" if scope.all_systems else f"{system.name}-{system.version}"
    parts = [kind, project.slug, judge.name if judge is not None else "", which]
    name = "-".join(filter(None, (slugify(part) for part in parts)))
    stamp = timezone.now().strftime("%Y%m%d")
    return content_disposition_header(True, f"{name}-{stamp}.{extension}")


@require_GET
@project_view(Role.LEAD)
def report_download(request, project, membership):
    judge = judge_from(project, request.GET.get("judge"))
    scope = Scope(project, request.GET.get("system"), pooled_default=True)
    snapshot = selectors.snapshot_latest_done(
        project=project, judge=judge, **scope.selectors_kwargs()
    )
    if snapshot is None:
        messages.info(request, "No report has been computed yet: press Recompute.")
        return redirect("metrics:dashboard", slug=project.slug)

    # allow_nan=False: the report's figures are finite or None (json_safe); NaN is not JSON.
    response = JsonResponse(
        report_public(snapshot.data), json_dumps_params={"indent": 2, "allow_nan": False}
    )
    response["Content-Disposition"] = _attachment(project, judge, "report", "json", scope)
    return response


def _audit_card_for(request, project):
    """(judge, report, card, instrument index, format, scope) of the request's audit card, or
    a redirect to the dashboard saying why there is none."""
    form = AuditCardForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad audit card parameters.")
    judge = judge_from(project, form.cleaned_data["judge"])
    if judge is None:
        messages.info(request, "An audit card belongs to a judge: choose one on the dashboard.")
        return redirect("metrics:dashboard", slug=project.slug)
    scope = Scope(project, form.cleaned_data["system"], pooled_default=True)
    snapshot = selectors.snapshot_latest_done(
        project=project, judge=judge, **scope.selectors_kwargs()
    )
    if snapshot is None or not snapshot.data.get("judge"):
        messages.info(request, "No report of this judge has been computed yet: press Recompute.")
        return redirect("metrics:dashboard", slug=project.slug)
    instruments = snapshot.data.get("instruments") or [snapshot.data["judge"]]
    index = min(form.cleaned_data["instrument"] or 0, len(instruments) - 1)
    card = audit_card(report=snapshot.data, instrument=index)
    return judge, snapshot.data, card, index, form.cleaned_data["format"] or "json", scope


@require_GET
@project_view(Role.LEAD)
def audit_card_download(request, project, membership):

    found = _audit_card_for(request, project)
    if isinstance(found, HttpResponse):
        return found
    judge, report, card, _index, fmt, scope = found
    if fmt == "csv":
        buffer = io.StringIO()
        writer = NeutralCsvWriter(buffer)
        writer.writerow(AUDIT_CARD_CSV_HEADER)
        writer.writerows(audit_card_rows(card))
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    elif fmt == "md":
        readable = audit_card_readable(card=card, design=report.get("design"))
        response = HttpResponse(
            audit_card_markdown(readable), content_type="text/markdown; charset=utf-8"
        )
    else:
        response = HttpResponse(
            json.dumps(card, indent=2, ensure_ascii=False, allow_nan=False),
            content_type="application/json",
        )
    response["Content-Disposition"] = _attachment(project, judge, "audit-card", fmt, scope)
    return response


@require_GET
@project_view(Role.LEAD)
def audit_card_page(request, project, membership):
    """The audit card to read and print (a print stylesheet); the downloads link from it."""
    found = _audit_card_for(request, project)
    if isinstance(found, HttpResponse):
        return found
    judge, report, card, index, _fmt, scope = found
    context = {
        "project": project,
        "membership": membership,
        "judge_param": judge_param(judge),
        "system_qs": scope.query,
        "instrument_index": index,
        "readable": audit_card_readable(card=card, design=report.get("design")),
    }
    return render(request, "metrics/audit_card.html", context)
