"""The API's operations (`/api/v1/…`): each checks the role as the screens do, through
`annotate.selectors.project_get_for_user` (a member below the role, or no member, gets 404),
then calls the screens' service. The schema at `/api/v1/openapi.json` documents them.
"""

import io
import json
import re

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.db.models import Prefetch
from django.http import Http404, StreamingHttpResponse
from ninja import NinjaAPI, Query, Status
from ninja.security import HttpBearer

from annotate.models import Answer, Claim, EvidenceSpan, Gold, Label, Membership, Project, Role
from annotate.selectors import (
    claim_get_for_project,
    claim_reveal_for_user,
    project_get_for_user,
    project_list_for_user,
)
from annotate.services.claims import ClaimsError, claim_add, claim_edit, claims_split
from annotate.services.labels import (
    ClaimHeld,
    LabelError,
    LabelSaveConflict,
    label_save_and_next,
    reveal_record,
)
from annotate.services.projects import (
    MembershipError,
    member_set_notice,
    membership_remove,
    membership_set,
)
from annotate.services.projects import project_create as project_create_service
from annotate.services.queue import QueueError, claim_next_for_user
from annotate.services.review import ReviewError, gold_adjudicate
from annotate.vocabulary import Verdict
from api import schemas as s
from api.problems import Problem, problem_handlers
from api.ratelimit import rate_check
from api.strict_json import (
    NDJSON,
    StrictParser,
    StrictRenderer,
    body_read,
    body_size_check,
    json_decode,
)
from api.tokens import token_authenticate
from interchange.importers.issues import ImportFailed
from interchange.services.exports import claims_export_chunks
from interchange.services.imports import answers_import
from interchange.services.preference_imports import preferences_import
from judges import selectors as judge_selectors
from judges.models import Backend, Judge, JudgeRun
from judges.services import judge_create, judge_run_cancel, judge_run_resume, judge_run_start
from judges.split_jobs import split_job_start
from metrics import selectors as metric_selectors
from metrics.models import ReportSnapshot
from metrics.services import audit_card, report_compute, report_public, snapshot_request
from metrics.services.compare import SystemNotFound, system_resolve, systems_compare
from metrics.services.gate import GateError, gate_check, gate_validate

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# A JSON array request holds at most this many answers; more go as NDJSON (streamed).
JSON_ANSWERS_MAX = 1000


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`: the request then acts as the token's user."""

    openapi_scheme = "bearer"

    def authenticate(self, request, token: str):
        api_token = token_authenticate(token)
        if api_token is None:
            return None
        wait = rate_check(api_token.prefix)
        if wait is not None:
            raise Problem(
                429,
                f"This token made more requests than its rate limit allows; retry in {wait} s.",
                slug="rate-limited",
                headers={"Retry-After": str(wait)},
            )
        if api_token.read_only and request.method not in SAFE_METHODS:
            raise Problem(
                403, "This token is read-only: it cannot change anything.", slug="read-only"
            )
        body_size_check(request)  # 413 before the operation reads the body
        request.user = api_token.user
        request.api_token = api_token
        return api_token


def _responses_by_code(responses: dict) -> dict:
    """One entry per status code, keyed by its string. Ninja keys the declared responses by
    integer and `openapi_extra` by string, so a route that refines its 200 in `openapi_extra`
    got both — two "200" keys in the JSON, which YAML-minded readers (the docs page's Swagger
    UI) refuse as a duplicated mapping key. The refinement wins, merged over the declared one."""
    merged: dict[str, dict] = {}
    for code, response in responses.items():
        merged[str(code)] = {**merged.get(str(code), {}), **response}
    return merged


class _Api(NinjaAPI):
    def get_openapi_schema(self, *args, **kwargs):
        schema = super().get_openapi_schema(*args, **kwargs)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        native = s.NativeAnswer.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(native.pop("$defs", {}))
        components["NativeAnswer"] = native
        components["NativePreference"] = s.NativePreference.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                operation["responses"] = _responses_by_code(operation.get("responses") or {})
                # Error responses are problem documents: say so in their media type.
                for response in operation["responses"].values():
                    content = response.get("content") or {}
                    body = content.get("application/json")
                    if body and body.get("schema", {}).get("$ref", "").endswith("/ProblemOut"):
                        content["application/problem+json"] = content.pop("application/json")
        return schema


api = _Api(
    title="FaithAudit API",
    version="1",
    description=(
        "Push answers with their pile, run judges, pull audited figures (with their method "
        "and intervals) and gate releases. Authenticate with a personal API token: "
        "`Authorization: Bearer <token>`. Every error is an RFC 9457 problem document "
        "(`application/problem+json`)."
    ),
    auth=TokenAuth(),
    urls_namespace="api",
    openapi_url="/openapi.json",
    docs_url="/docs",
    parser=StrictParser(),
    renderer=StrictRenderer(),
)
problem_handlers(api)

# Every operation can answer these problems (422: a parameter or body that does not validate;
# 429: the token's rate limit).
ERRORS = dict.fromkeys((400, 401, 403, 404, 422, 429), s.ProblemOut)
# 413: a JSON body over FAITHAUDIT_API_MAX_BODY_BYTES (api/strict_json.py).
WRITE_ERRORS = {**ERRORS, 409: s.ProblemOut, 413: s.ProblemOut}


def _project(request, slug: str, role: str = Role.ANALYST) -> tuple[Project, Membership]:
    """The project as the screens see it for this user and role; a token scoped to another
    project sees nothing (404, as for a non-member)."""
    token = request.auth
    project, membership = project_get_for_user(user=request.user, slug=slug, role=role)
    if token.project_id is not None and token.project_id != project.pk:
        raise Http404("No such project.")
    return project, membership


def _judge(project: Project, name: str | None) -> Judge | None:
    if not name:
        return None
    judge = metric_selectors.judge_get_by_name(project=project, name=name)
    if judge is None:
        raise Problem(
            404,
            f"This project has no judge named {name!r}.",
            errors=[{"field": "judge", "detail": "unknown judge"}],
        )
    return judge


def _system_scope(project: Project, ref: str | None) -> dict:
    """The `system` parameter of a report: NAME@VERSION or NAME (one system's answers), "all"
    (every system's pooled), or none (the project's default: its first system of several)."""
    if not ref:
        return {"system": None, "all_systems": False}
    if ref.strip() == "all":
        return {"system": None, "all_systems": True}
    try:
        return {"system": system_resolve(project=project, ref=ref), "all_systems": False}
    except SystemNotFound as error:
        raise _invalid(str(error), "system", status=404) from None


def _invalid(detail: str, field: str = "", status: int = 422) -> Problem:
    return Problem(status, detail, slug="invalid", errors=[{"field": field, "detail": detail}])


def _validation(error: DjangoValidationError) -> Problem:
    errors = []
    if hasattr(error, "error_dict"):
        for field, messages in error.message_dict.items():
            errors += [{"field": field, "detail": message} for message in messages]
    else:
        errors = [{"field": "", "detail": message} for message in error.messages]
    return Problem(
        422,
        "; ".join(f"{e['field']}: {e['detail']}" if e["field"] else e["detail"] for e in errors),
        slug="invalid",
        errors=errors,
    )


# -- projects ------------------------------------------------------------------------------


def _project_out(project: Project, role: str | None) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "description": project.description,
        "answers": project.answers_count,
        "role": role,
    }


@api.get("/projects", response={200: list[s.ProjectOut], **ERRORS}, tags=["projects"])
def projects_list(request):
    """The projects the token's user is a member of (only its project for a scoped token)."""
    projects = project_list_for_user(user=request.user)
    if request.auth.project_id is not None:
        projects = projects.filter(pk=request.auth.project_id)
    roles = dict(Membership.objects.filter(user=request.user).values_list("project_id", "role"))
    return [_project_out(project, roles.get(project.pk)) for project in projects]


@api.post("/projects", response={201: s.ProjectOut, **WRITE_ERRORS}, tags=["projects"])
def projects_create(request, payload: s.ProjectIn):
    """Create a project (staff only, as the new-project page); the token's user owns it."""
    if request.auth.project_id is not None:
        raise Problem(403, "A token scoped to one project cannot create projects.")
    if Project.objects.filter(slug=payload.slug).exists():
        raise _invalid(f"A project with slug {payload.slug!r} already exists.", "slug", 409)
    try:
        project = project_create_service(
            slug=payload.slug,
            name=payload.name,
            owner=request.user,
            description=payload.description,
        )
    except PermissionDenied as error:
        raise Problem(403, str(error)) from None
    except DjangoValidationError as error:  # a description over the operator's limit
        raise _validation(error) from None
    except IntegrityError:
        raise _invalid(
            f"A project with slug {payload.slug!r} already exists.", "slug", 409
        ) from None
    return Status(201, _project_out(project, Role.OWNER))


@api.get("/projects/{slug}", response={200: s.ProjectOut, **ERRORS}, tags=["projects"])
def projects_read(request, slug: str):
    project, membership = _project(request, slug)
    return _project_out(project, membership.role)


@api.get("/projects/{slug}/members", response={200: list[s.MemberOut], **ERRORS}, tags=["projects"])
def members_list(request, slug: str):
    """The project's members and roles (owners, as the settings page)."""
    project, _ = _project(request, slug, Role.OWNER)
    return [
        {"username": m.user.username, "role": m.role}
        for m in Membership.objects.filter(project=project)
        .select_related("user")
        .order_by("user__username")
    ]


@api.put(
    "/projects/{slug}/members/{username}",
    response={200: s.MemberSetOut, **WRITE_ERRORS},
    tags=["projects"],
)
def members_set(request, slug: str, username: str, payload: s.MemberIn):
    """Give an existing, active user a role (adding them). The answer is the same, 200 with
    the same body, whether the user exists and was given the role, exists but cannot be
    added (deactivated), or does not exist: the reply tells nobody which usernames exist (as
    the settings page's members form). The owner sees who was added in the members list, as
    on the settings page; creating projects is staff-only in production."""
    project, _ = _project(request, slug, Role.OWNER)
    try:
        membership_set(project=project, username=username, role=payload.role)
    except MembershipError as error:  # about an existing member: the list shows them anyway
        raise _invalid(str(error), "role") from None
    return {
        "username": username,
        "role": payload.role,
        "detail": member_set_notice(username=username, role=payload.role),
    }


@api.delete(
    "/projects/{slug}/members/{username}", response={204: None, **WRITE_ERRORS}, tags=["projects"]
)
def members_remove(request, slug: str, username: str):
    project, _ = _project(request, slug, Role.OWNER)
    membership = Membership.objects.filter(project=project, user__username=username).first()
    if membership is None:
        raise Http404("No such member.")
    try:
        membership_remove(project=project, membership_id=membership.pk)
    except MembershipError as error:
        raise _invalid(str(error), "username", 409) from None
    return Status(204, None)


# -- answers -------------------------------------------------------------------------------


class _Rewindable(io.RawIOBase):
    """The request body as a binary stream read once, front to back; the import's format
    sniffing (read the head, seek back to 0) is served from the first bytes kept aside."""

    HEAD = 64 * 1024

    def __init__(self, stream):
        self.stream = stream
        self.head = stream.read(self.HEAD) or b""
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0 or offset > len(self.head) or self.position > len(self.head):
            raise OSError("the request body can only be rewound to its first bytes")
        self.position = offset
        return offset

    def readinto(self, buffer) -> int:
        if self.position < len(self.head):
            data = self.head[self.position : self.position + len(buffer)]
        else:
            data = self.stream.read(len(buffer)) or b""
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


_LOCATION = re.compile(r"^(?:record (\d+)|line (\d+))")


def _issue_out(issue) -> dict:
    out = {"field": issue.field, "detail": issue.message, "location": issue.location}
    match = _LOCATION.match(issue.location)
    if match:
        out["index"] = int(match.group(1) or match.group(2)) - 1
    return out


@api.post(
    "/projects/{slug}/answers",
    response={
        200: s.AnswersOut,
        201: s.AnswersOut,
        **WRITE_ERRORS,
        413: s.ProblemOut,
        415: s.ProblemOut,
    },
    tags=["answers"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": (
                "Answers in the native import schema (the same objects as a line of a native "
                "JSON Lines file: id, question, answer, pile, and optionally claims with "
                f"labels, gold and judge verdicts). A JSON array of at most {JSON_ANSWERS_MAX}, "
                "or any number as NDJSON (`Content-Type: application/x-ndjson`, one answer "
                "per line, read as a stream)."
            ),
            "content": {
                "application/json": {
                    "schema": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": JSON_ANSWERS_MAX,
                        "items": {"$ref": "#/components/schemas/NativeAnswer"},
                    }
                },
                NDJSON: {"schema": {"$ref": "#/components/schemas/NativeAnswer"}},
            },
        }
    },
)
def answers_create(request, slug: str):
    """Create answers with their pile, all or nothing. Idempotent by the answer's id: an
    answer already there with the same content is counted in `existing` and left alone; one
    whose content differs is refused, naming its id, index and field. 201 when anything was
    created, 200 when everything was already there."""
    project, _ = _project(request, slug, Role.LEAD)
    content_type = request.content_type or ""
    if content_type == NDJSON:
        name, most = "request.jsonl", None
    elif content_type in ("application/json", ""):
        name, most = (
            "request.json",
            (JSON_ANSWERS_MAX, "per JSON request (send more as application/x-ndjson)"),
        )
    else:
        raise Problem(415, f"Send application/json (an array) or {NDJSON}, not {content_type!r}.")
    if content_type == NDJSON:
        body = _Rewindable(request)
    else:  # a JSON array is capped (FAITHAUDIT_API_MAX_BODY_BYTES): read it whole
        body = io.BytesIO(body_read(request))
        if not body.getvalue().lstrip().startswith(b"["):
            raise _invalid("The body must be a JSON array of answers (or send NDJSON).", "")
    try:
        result = answers_import(
            project=project,
            path_or_file=_Named(body, name),
            format="native",
            user=request.user,
            idempotent=True,
            most=most,
        )
    except ImportFailed as error:
        errors = [_issue_out(issue) for issue in error.issues]
        first = errors[0] if errors else {}
        where = f"item {first['index']}" if "index" in first else first.get("location", "")
        raise Problem(
            422,
            f"Nothing was written: {len(errors)} problem(s){' (stopped early)' if error.truncated else ''}; "
            f"first at {where}{', field ' + first['field'] if first.get('field') else ''}: {first.get('detail', '')}",
            slug="answers-refused",
            title="Answers refused",
            errors=errors,
        ) from None
    out = {
        "created": result.answers,
        "existing": result.existing,
        "passages": result.passages,
        "claims": result.claims,
        "labels": result.labels,
        "gold": result.gold,
        "judge_verdicts": result.judge_verdicts,
    }
    return Status(201 if result.answers else 200, out)


class _Named:
    """A binary stream with a name, as `binary_source` expects of a file."""

    def __init__(self, handle, name: str):
        self.file = handle
        self.name = name


# -- reports and the gate ------------------------------------------------------------------


@api.get("/projects/{slug}/report", response={200: dict, **ERRORS}, tags=["reports"])
def report_read(request, slug: str, judge: str | None = None, system: str | None = None):
    """The report computed now: the same JSON as `manage.py report --format json` (with
    `judge`, as `--judge`; `system`, as `--system`: NAME@VERSION, NAME or all). Leads and
    owners, as the dashboard."""
    project, _ = _project(request, slug, Role.LEAD)
    found = _judge(project, judge)
    scope = _system_scope(project, system)
    return report_public(report_compute(project=project, judge=found, **scope))


def _snapshot_out(snapshot: ReportSnapshot) -> dict:
    out = {
        "id": snapshot.pk,
        "status": snapshot.status,
        "progress": snapshot.progress,
        "stage": snapshot.stage,
        "error": snapshot.error,
        "judge": snapshot.judge.name if snapshot.judge_id else None,
        "created_at": snapshot.created_at,
        "computed_at": snapshot.computed_at,
        "report": None,
    }
    if snapshot.status == ReportSnapshot.Status.DONE and snapshot.data:
        out["report"] = report_public(snapshot.data)
    return out


@api.post(
    "/projects/{slug}/report/snapshots",
    response={202: s.SnapshotOut, **WRITE_ERRORS},
    tags=["reports"],
)
def snapshot_create(request, slug: str, judge: str | None = None, system: str | None = None):
    """Request a recompute (as the dashboard's Recompute, of `system`'s answers as its
    picker: NAME@VERSION, NAME or all); poll the snapshot until done."""
    project, _ = _project(request, slug, Role.LEAD)
    found = _judge(project, judge)
    snapshot = snapshot_request(project=project, judge=found, **_system_scope(project, system))
    snapshot.refresh_from_db()
    return Status(202, _snapshot_out(snapshot))


@api.get(
    "/projects/{slug}/report/snapshots/{snapshot_id}",
    response={200: s.SnapshotOut, **ERRORS},
    tags=["reports"],
)
def snapshot_read(request, slug: str, snapshot_id: int):
    project, _ = _project(request, slug, Role.LEAD)
    return _snapshot_out(
        metric_selectors.snapshot_get_for_project(project=project, snapshot_id=snapshot_id)
    )


@api.get("/projects/{slug}/audit-card", response={200: dict, **ERRORS}, tags=["reports"])
def audit_card_read(request, slug: str, judge: str, instrument: int = 0, system: str | None = None):
    """A judge's audit card computed now (as `manage.py export_audit --format json`; `system`
    as its `--system`)."""
    project, _ = _project(request, slug, Role.LEAD)
    found = _judge(project, judge)
    report = report_compute(project=project, judge=found, **_system_scope(project, system))
    instruments = report.get("instruments") or ([report["judge"]] if report.get("judge") else [])
    if not 0 <= instrument < len(instruments):
        raise _invalid(
            f"instrument must be between 0 and {len(instruments) - 1} ({len(instruments)} instrument(s))"
            if instruments
            else f"judge {judge!r} has no verdicts to audit yet",
            "instrument",
        )
    return audit_card(report=report, instrument=instrument)


@api.get(
    "/projects/{slug}/gate",
    response={200: s.GateOut, **ERRORS},
    tags=["reports"],
    by_alias=True,
)
def gate(
    request,
    slug: str,
    metric: str = "faithfulness",
    min: float | None = None,  # noqa: A002 - the query parameter's name
    max: float | None = None,  # noqa: A002
    on: str = "lower",
    judge: str | None = None,
):
    """Pass or fail on one figure of the report computed now, judged on its interval's
    lower end by default; the same as `manage.py report --fail-under MIN --on lower`. `min`
    and `max` are finite numbers from 0 to 1 (422 naming the parameter otherwise); a figure
    that is missing or could not be computed fails, the reason saying which."""
    project, _ = _project(request, slug, Role.LEAD)
    found = _judge(project, judge)
    try:
        gate_validate(metric=metric, minimum=min, maximum=max, on=on)
    except GateError as error:
        raise _invalid(str(error), str(error).split(":")[0]) from None
    report = report_compute(project=project, judge=found)
    return gate_check(report, metric=metric, minimum=min, maximum=max, on=on)


@api.get("/projects/{slug}/compare", response={200: dict, **ERRORS}, tags=["reports"])
def compare_read(request, slug: str, a: str, b: str, judge: str | None = None):
    """Two systems compared on the questions both answered: the same JSON as `manage.py
    compare --a A --b B [--judge NAME] --format json` (`a`, `b`: a system as `name@version`
    or its name alone). Leads and owners, as the comparison page."""
    project, _ = _project(request, slug, Role.LEAD)
    found = _judge(project, judge)
    systems = []
    for field, ref in (("a", a), ("b", b)):
        try:
            systems.append(system_resolve(project=project, ref=ref))
        except SystemNotFound as error:
            raise _invalid(str(error), field, status=404) from None
    if systems[0].pk == systems[1].pk:
        raise _invalid("a and b name the same system", "b")
    return systems_compare(project=project, a=systems[0], b=systems[1], judge=found)


@api.post(
    "/projects/{slug}/preferences",
    response={200: s.PreferencesOut, 201: s.PreferencesOut, **WRITE_ERRORS, 415: s.ProblemOut},
    tags=["reports"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": (
                "People's pairwise preferences between two systems' answers to a question, "
                "as the native preferences file holds them (question_id, system_a, system_b, "
                "annotator, preference A/B/tie and/or strength −2..2, note): a JSON array, "
                "NDJSON, or CSV (`text/csv`) with those columns. RAGChecker's human-study "
                "records (query_id, model1, model2, overall_label) are read too. Both systems' "
                "answers must already be in the project."
            ),
            "content": {
                "application/json": {
                    "schema": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/components/schemas/NativePreference"},
                    }
                },
                NDJSON: {"schema": {"$ref": "#/components/schemas/NativePreference"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    },
)
def preferences_create(request, slug: str):
    """Import pairwise preferences, all or nothing; the compare report's "Pairwise, analysts"
    block reads them with the blind screen's marks. Idempotent: a mark already imported (the
    same annotator on the same pair) is replaced, so sending the same body twice changes
    nothing (201 when anything was created, 200 otherwise). Leads and owners."""
    project, _ = _project(request, slug, Role.LEAD)
    content_type = request.content_type or ""
    names = {NDJSON: "request.jsonl", "text/csv": "request.csv", "application/json": "request.json"}
    if content_type not in names and content_type != "":
        raise Problem(
            415, f"Send application/json (an array), {NDJSON} or text/csv, not {content_type!r}."
        )
    body = _Rewindable(request)
    if content_type in ("application/json", "") and not body.head.lstrip().startswith(b"["):
        raise _invalid("The body must be a JSON array of preferences (or send NDJSON).", "")
    try:
        result = preferences_import(
            project=project, path_or_file=_Named(body, names.get(content_type, "request.json"))
        )
    except ImportFailed as error:
        errors = [_issue_out(issue) for issue in error.issues]
        first = errors[0] if errors else {}
        where = f"item {first['index']}" if "index" in first else first.get("location", "")
        field = f", field {first['field']}" if first.get("field") else ""
        raise Problem(
            422,
            f"Nothing was written: {len(errors)} problem(s); first at {where}{field}: "
            f"{first.get('detail', '')}",
            slug="preferences-refused",
            title="Preferences refused",
            errors=errors,
        ) from None
    out = {
        key: getattr(result, key)
        for key in ("created", "updated", "unchanged", "pairs", "annotators")
    }
    return Status(201 if result.created else 200, out)


# -- judges and runs -----------------------------------------------------------------------


def _judge_out(judge: Judge) -> dict:
    return {
        "id": judge.pk,
        "name": judge.name,
        "backend": judge.backend,
        "model": judge.model,
        "endpoint": judge.endpoint,
    }


@api.get("/projects/{slug}/judges", response={200: list[s.JudgeOut], **ERRORS}, tags=["judges"])
def judges_list(request, slug: str):
    project, _ = _project(request, slug, Role.LEAD)
    return [_judge_out(j) for j in judge_selectors.judge_list_for_project(project=project)]


@api.post("/projects/{slug}/judges", response={201: s.JudgeOut, **WRITE_ERRORS}, tags=["judges"])
def judges_create(request, slug: str, payload: s.JudgeIn):
    project, _ = _project(request, slug, Role.LEAD)
    if payload.backend not in (Backend.BASELINE, Backend.OPENAI):
        raise _invalid("backend: use baseline or openai", "backend")
    if Judge.objects.filter(project=project, name=payload.name).exists():
        raise _invalid(f"This project already has a judge named {payload.name!r}.", "name", 409)
    try:
        judge = judge_create(
            project=project,
            name=payload.name,
            backend=payload.backend,
            model=payload.model,
            endpoint=payload.endpoint,
            temperature=payload.temperature,
        )
    except DjangoValidationError as error:
        raise _validation(error) from None
    return Status(201, _judge_out(judge))


def _run_out(run: JudgeRun) -> dict:
    return {
        "id": run.pk,
        "judge": run.judge.name,
        "kind": run.kind,
        "scope": run.scope,
        "status": run.status,
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "unparseable": run.unparseable,
        "remaining": max(run.total - run.done - run.failed - run.unparseable, 0),
        "error": run.error,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def _judge_by_name(project: Project, name: str) -> Judge:
    judge = Judge.objects.filter(project=project, name=name).first()
    if judge is None:
        raise Http404("No such judge.")
    return judge


@api.get(
    "/projects/{slug}/judges/{name}/runs", response={200: list[s.RunOut], **ERRORS}, tags=["judges"]
)
def runs_list(request, slug: str, name: str):
    project, _ = _project(request, slug, Role.LEAD)
    judge = _judge_by_name(project, name)
    return [
        _run_out(run)
        for run in JudgeRun.objects.filter(judge=judge)
        .select_related("judge")
        .order_by("-created_at")[:100]
    ]


@api.post(
    "/projects/{slug}/judges/{name}/runs", response={202: s.RunOut, **WRITE_ERRORS}, tags=["judges"]
)
def runs_start(request, slug: str, name: str, payload: s.RunIn):
    """Start a run on all, unjudged or gold claims (as the judge page's Run); poll its status."""
    project, _ = _project(request, slug, Role.LEAD)
    judge = _judge_by_name(project, name)
    if judge.backend == Backend.IMPORTED:
        raise _invalid(
            "An imported judge's verdicts come from files; it cannot be run.", "name", 409
        )
    try:
        run = judge_run_start(
            judge=judge, kind=payload.kind, scope=payload.scope, user=request.user
        )
    except DjangoValidationError as error:
        raise _validation(error) from None
    run.refresh_from_db()
    return Status(202, _run_out(run))


def _run(request, slug: str, run_id: int) -> JudgeRun:
    project, _ = _project(request, slug, Role.LEAD)
    return judge_selectors.judge_run_get_for_project(project=project, run_id=run_id)


@api.get("/projects/{slug}/runs/{run_id}", response={200: s.RunOut, **ERRORS}, tags=["judges"])
def runs_read(request, slug: str, run_id: int):
    return _run_out(_run(request, slug, run_id))


@api.post(
    "/projects/{slug}/runs/{run_id}/cancel",
    response={200: s.RunOut, **WRITE_ERRORS},
    tags=["judges"],
)
def runs_cancel(request, slug: str, run_id: int):
    run = _run(request, slug, run_id)
    if not judge_run_cancel(run=run):
        raise _invalid(f"Run {run.pk} has already finished ({run.status}).", "run_id", 409)
    return _run_out(run)


@api.post(
    "/projects/{slug}/runs/{run_id}/resume",
    response={202: s.RunOut, **WRITE_ERRORS},
    tags=["judges"],
)
def runs_resume(request, slug: str, run_id: int):
    run = _run(request, slug, run_id)
    if not judge_run_resume(run=run):
        raise _invalid(
            f"Run {run.pk} is live or has nothing left to do ({run.status}).", "run_id", 409
        )
    run.refresh_from_db()
    return Status(202, _run_out(run))


# -- claims, labels, gold ------------------------------------------------------------------


def _claim_out(claim: Claim, external_id: str | None = None) -> dict:
    return {
        "id": claim.pk,
        "answer": external_id if external_id is not None else claim.answer.external_id,
        "position": claim.position,
        "text": claim.text,
        "origin": claim.origin,
        "tags": claim.tags or [],
    }


def _keyset_page(rows, after: int, limit: int, **renamed) -> dict:
    """One page of `rows` (a `.values()` queryset with "pk") in id order after the cursor
    `after`: each row as an item keyed by its field names, "pk" as "id", an item key given in
    `renamed` taken from that column (or computed by that callable); `next` the cursor of the
    page after, None on the last page."""
    page = rows.filter(pk__gt=after).order_by("pk")[:limit]
    sources = {source for source in renamed.values() if isinstance(source, str)}
    items = []
    for r in page:
        item = {"id": r["pk"]}
        item.update({k: v for k, v in r.items() if k != "pk" and k not in sources})
        for key, source in renamed.items():
            item[key] = source(r) if callable(source) else r[source]
        items.append(item)
    return {"items": items, "next": items[-1]["id"] if len(items) == limit else None}


def _answer_by_id(project: Project, external_id: str) -> Answer:
    answer = Answer.objects.filter(project=project, external_id=external_id).first()
    if answer is None:
        raise Http404("No such answer.")
    return answer


@api.get("/projects/{slug}/claims", response={200: s.ClaimPage, **ERRORS}, tags=["claims"])
def claims_list(request, slug: str, after: int = 0, limit: int = Query(500, ge=1, le=5000)):
    """Claims in id order, a page at a time: pass the page's `next` as `after` (a cursor, so
    constant memory on both sides however large the project). Leads: no verdicts here."""
    project, _ = _project(request, slug, Role.LEAD)
    rows = Claim.objects.filter(project=project).values(
        "pk", "answer__external_id", "position", "text", "origin", "tags"
    )
    return _keyset_page(
        rows, after, limit, answer="answer__external_id", tags=lambda r: r["tags"] or []
    )


@api.get(
    "/projects/{slug}/claims/{claim_id}",
    response={200: s.ClaimDetailOut, **ERRORS},
    tags=["claims"],
)
def claims_read(request, slug: str, claim_id: int):
    """A claim with its answer and pile, as the labelling screen shows it (no verdicts)."""
    project, _ = _project(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    answer = claim.answer
    return {
        **_claim_out(claim, answer.external_id),
        "answer_text": answer.text,
        "question": answer.question,
        "pile": [
            {"rank": p.rank, "id": p.source_id, "title": p.title, "text": p.text}
            for p in answer.passages.order_by("rank")
        ],
    }


@api.post(
    "/projects/{slug}/answers/{external_id}/split",
    response={201: list[s.ClaimOut], 202: s.SplitJobOut, **WRITE_ERRORS},
    tags=["claims"],
)
def answers_split(request, slug: str, external_id: str, payload: s.SplitIn):
    """Split an answer into claims by rule (now) or by an LLM judge's decompose prompt (a job)."""
    project, _ = _project(request, slug, Role.LEAD)
    answer = _answer_by_id(project, external_id)
    if payload.method == "llm":
        if not payload.judge:
            raise _invalid(
                "Splitting by LLM needs the judge whose decompose prompt to use.", "judge"
            )
        judge = _judge_by_name(project, payload.judge)
        try:
            job = split_job_start(
                judge=judge, answer=answer, user=request.user, force=payload.force
            )
        except (ClaimsError, DjangoValidationError, ValueError) as error:
            raise _invalid(str(getattr(error, "message", error)), "method", 409) from None
        return Status(202, {"id": job.pk, "status": job.status})
    try:
        claims = claims_split(answer=answer, method="rule", user=request.user, force=payload.force)
    except ClaimsError as error:
        raise _invalid(str(error), "force", 409) from None
    return Status(201, [_claim_out(c, external_id) for c in claims])


@api.post(
    "/projects/{slug}/answers/{external_id}/claims",
    response={201: s.ClaimOut, **WRITE_ERRORS},
    tags=["claims"],
)
def claims_create(request, slug: str, external_id: str, payload: s.ClaimIn):
    project, _ = _project(request, slug, Role.LEAD)
    answer = _answer_by_id(project, external_id)
    try:
        claim = claim_add(answer=answer, text=payload.text, user=request.user)
    except (ClaimsError, PermissionDenied) as error:
        raise _invalid(str(error), "text") from None
    return Status(201, _claim_out(claim, external_id))


@api.patch(
    "/projects/{slug}/claims/{claim_id}",
    response={200: s.ClaimOut, **WRITE_ERRORS},
    tags=["claims"],
)
def claims_edit(request, slug: str, claim_id: int, payload: s.ClaimIn):
    project, _ = _project(request, slug, Role.LEAD)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    try:
        claim = claim_edit(claim=claim, text=payload.text, user=request.user)
    except (ClaimsError, PermissionDenied) as error:
        raise _invalid(str(error), "text") from None
    return _claim_out(claim)


_SPANS = Prefetch("more_spans", queryset=EvidenceSpan.objects.select_related("passage"))


def _label_out(label: Label) -> dict:
    return {
        "annotator": str(
            label.annotator.username if label.annotator_id else label.imported_annotator
        ),
        "verdict": label.verdict,
        "quote": label.evidence_quote or "",
        "passage_rank": label.evidence_passage.rank if label.evidence_passage_id else None,
        "more_quotes": [
            {"passage_rank": span.passage.rank, "quote": span.quote}
            for span in label.more_spans.all()
        ],
        "note": label.note,
        "updated_at": label.updated_at,
    }


@api.get(
    "/projects/{slug}/claims/{claim_id}/labels",
    response={200: s.LabelsOut, **ERRORS},
    tags=["labels"],
)
def labels_read(request, slug: str, claim_id: int):
    """Your own label; the judges' verdicts and colleagues' labels only as the labelling
    screen reveals them (after your own label, in a project that reveals after saving).
    Leads and owners see every label, as on the review screens."""
    project, membership = _project(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    own = (
        Label.objects.filter(claim=claim, annotator=request.user)
        .select_related("annotator", "imported_annotator", "evidence_passage")
        .prefetch_related(_SPANS)
        .first()
    )
    out = {"own": _label_out(own) if own else None, "revealed": None, "all": None}
    reveal = claim_reveal_for_user(claim=claim, user=request.user, project=project)
    if reveal is not None:
        out["revealed"] = {
            "judge_verdicts": [
                {"judge": v.run.judge.name, "verdict": v.verdict, "confidence": v.confidence}
                for v in reveal["judge_verdicts"]
            ],
            "colleague_labels": [_label_out(label) for label in reveal["colleague_labels"]],
        }
    if membership.role in (Role.LEAD, Role.OWNER):
        out["all"] = [
            _label_out(label)
            for label in Label.objects.filter(claim=claim)
            .select_related("annotator", "imported_annotator", "evidence_passage")
            .prefetch_related(_SPANS)
            .order_by("created_at", "id")
        ]
    shown_others = (
        reveal is not None and (reveal["judge_verdicts"] or reveal["colleague_labels"])
    ) or (out["all"] is not None and len(out["all"]) > 1)
    if own is not None and shown_others:
        # as the labelling screen does: a later change of this label is then marked
        # changed_after_reveal (the answer just carried others' verdicts beside it)
        reveal_record(claim_id=claim.pk, user=request.user, verdict=own.verdict)
    return out


@api.post(
    "/projects/{slug}/claims/{claim_id}/labels",
    response={201: s.LabelOut, **WRITE_ERRORS, 503: s.ProblemOut},
    tags=["labels"],
)
def labels_create(request, slug: str, claim_id: int, payload: s.LabelIn):
    """Save your label on a claim through the labelling screen's service and checks (the
    quote is looked up in the passage of that rank)."""
    project, membership = _project(request, slug)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    passage_id = None
    if payload.passage_rank is not None:
        passage = claim.answer.passages.filter(rank=payload.passage_rank).first()
        if passage is None:
            raise _invalid(
                f"The pile has no passage of rank {payload.passage_rank}.", "passage_rank"
            )
        passage_id = passage.pk
    more = []
    if payload.more_quotes:
        ranks = dict(
            claim.answer.passages.filter(
                rank__in=[span.passage_rank for span in payload.more_quotes]
            ).values_list("rank", "pk")
        )
        for index, span in enumerate(payload.more_quotes):
            if span.passage_rank not in ranks:
                raise _invalid(
                    f"Span {index + 2}: the pile has no passage of rank {span.passage_rank}.",
                    f"more_quotes[{index}].passage_rank",
                )
            more.append(
                {"passage_id": ranks[span.passage_rank], "start_utf16": None,
                 "end_utf16": None, "quote": span.quote}
            )  # fmt: skip
    try:
        label_save_and_next(
            project=project,
            membership=membership,
            annotator=request.user,
            claim_id=claim.pk,
            verdict=payload.verdict,
            passage_id=passage_id,
            quote=payload.quote,
            more=more,
            note=payload.note,
            correct=payload.correct if payload.verdict != Verdict.SUPPORTED else "",
        )
    except ClaimHeld as error:
        raise _claim_held(request, project, membership, str(error)) from None
    except (LabelError, QueueError) as error:
        raise _invalid(str(error), _label_error_field(str(error))) from None
    except LabelSaveConflict as error:
        raise Problem(503, str(error), headers={"Retry-After": "1"}) from None
    label = (
        Label.objects.select_related("annotator", "imported_annotator", "evidence_passage")
        .prefetch_related(_SPANS)
        .get(claim_id=claim.pk, annotator=request.user)
    )
    return Status(201, _label_out(label))


def _claim_held(request, project: Project, membership: Membership, why: str) -> Problem:
    """409 for a save on a claim a colleague holds: the problem names the caller's next claim
    (`next_claim`, reserved for them as the labelling screen would; null when their queue is
    empty), so a client moves on instead of retrying."""
    try:
        following = claim_next_for_user(
            project=project, user=request.user, stratum=membership.queue_stratum
        )
    except QueueError:
        following = None
    return Problem(
        409,
        f"{why} Label the claim given as next_claim instead.",
        slug="claim-reserved",
        extra={"next_claim": following.pk if following else None},
    )


def _label_error_field(message: str) -> str:
    """The field a label's error is about: a span after the first ("Span 3: …", "Span 3
    overlaps span 1 …": more_quotes[1]), the verdict, else the quote."""
    if match := re.match(r"Span (\d+)\b", message):
        number = int(match.group(1))
        return f"more_quotes[{number - 2}]" if number >= 2 else "quote"
    return "verdict" if "verdict" in message.lower() else "quote"


@api.get("/projects/{slug}/gold", response={200: s.GoldPage, **ERRORS}, tags=["labels"])
def gold_list(request, slug: str, after: int = 0, limit: int = Query(500, ge=1, le=5000)):
    project, _ = _project(request, slug, Role.LEAD)
    rows = Gold.objects.filter(claim__project=project).values(
        "pk", "claim_id", "verdict", "source", "reason"
    )
    return _keyset_page(rows, after, limit, claim="claim_id")


@api.post(
    "/projects/{slug}/claims/{claim_id}/gold",
    response={201: s.GoldOut, **WRITE_ERRORS},
    tags=["labels"],
)
def gold_create(request, slug: str, claim_id: int, payload: s.GoldIn):
    """A lead's adjudication, as the adjudication screen."""
    project, _ = _project(request, slug, Role.LEAD)
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    try:
        gold = gold_adjudicate(
            claim=claim, verdict=payload.verdict, reason=payload.reason, user=request.user
        )
    except (ReviewError, PermissionDenied) as error:
        raise _invalid(str(error), "verdict") from None
    return Status(
        201,
        {
            "id": gold.pk,
            "claim": claim.pk,
            "verdict": gold.verdict,
            "source": gold.source,
            "reason": gold.reason,
        },
    )


@api.get(
    "/projects/{slug}/claims.ndjson",
    tags=["claims"],
    response={200: None, **ERRORS},
    openapi_extra={
        "responses": {
            "200": {
                "description": "One native answer per line (what `export_claims --format jsonl` writes)",
                "content": {NDJSON: {"schema": {"type": "string"}}},
            }
        }
    },
)
def claims_export(request, slug: str):
    """Every answer with its claims, labels, gold and judge verdicts as NDJSON, streamed
    (constant memory): the claims export page's native JSON Lines."""
    project, _ = _project(request, slug, Role.LEAD)
    chunks = claims_export_chunks(project=project, format="jsonl")
    response = StreamingHttpResponse((chunk.encode() for chunk in chunks), content_type=NDJSON)
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-claims.ndjson"'
    return response


# -- OTLP trace ingestion --------------------------------------------------------------------

PROJECT_HEADER = "X-FaithAudit-Project"


@api.post(
    "/otlp/v1/traces",
    response={200: s.OtlpOut, **WRITE_ERRORS, 415: s.ProblemOut},
    tags=["answers"],
    openapi_extra={
        "parameters": [
            {
                "name": PROJECT_HEADER,
                "in": "header",
                "required": False,
                "schema": {"type": "string"},
                "description": "The project's slug (else the token's project scope).",
            }
        ],
        "requestBody": {
            "required": True,
            "description": "An OTLP/HTTP ExportTraceServiceRequest in the JSON encoding.",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
)
def otlp_traces(request):
    """OpenTelemetry traces (GenAI conventions or OpenInference) → one answer per trace with
    its pile in rank order, through the same import as POST …/answers (idempotent by trace id)."""
    from api.otlp import TraceError, traces_to_records

    slug = request.headers.get(PROJECT_HEADER) or (
        request.auth.project.slug if request.auth.project_id else ""
    )
    if not slug:
        raise _invalid(
            f"Name the project: a token scoped to it, or the {PROJECT_HEADER} header.",
            PROJECT_HEADER,
        )
    project, _ = _project(request, slug, Role.LEAD)
    if (request.content_type or "application/json") != "application/json":
        raise Problem(415, "Send OTLP/HTTP traces in the JSON encoding (application/json).")
    payload = json_decode(body_read(request) or b"null")
    try:
        records, skipped = traces_to_records(payload)
    except TraceError as error:
        raise Problem(
            422,
            f"The traces are refused: {error}",
            slug="invalid",
            errors=[{"field": field, "detail": detail} for field, detail in error.problems],
        ) from None
    out = {"partialSuccess": {"rejectedSpans": 0, "errorMessage": "; ".join(skipped)}}
    out.update(created=0, existing=0, skipped=len(skipped))
    if not records:
        return out
    try:
        result = answers_import(
            project=project,
            path_or_file=_Named(io.BytesIO(json.dumps(records).encode()), "traces.json"),
            format="native",
            user=request.user,
            idempotent=True,
        )
    except ImportFailed as error:
        errors = []
        for issue in error.issues:
            item = _issue_out(issue)
            if "index" in item and item["index"] < len(records):
                item["location"] = f"trace {records[item['index']]['id']}"
            errors.append(item)
        raise Problem(
            422,
            "Nothing was written: "
            + "; ".join(f"{e['location']} {e['field']}: {e['detail']}" for e in errors),
            slug="answers-refused",
            errors=errors,
        ) from None
    out.update(created=result.answers, existing=result.existing)
    return out
