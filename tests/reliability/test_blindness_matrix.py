"""The blindness matrix (issue 34): every web route (walked from the URLconf, so a new view
cannot escape) and every API operation (from the OpenAPI schema), each fetched by an analyst
before their own label on the claim, an analyst after theirs, and a lead, in one project where
everything an analyst must not see first is planted under a distinctive marker:

- the judge's verdict on the claim (the judge's name, which every verdict shown carries);
- a colleague's label on the claim (their name and note), and their comment on it;
- the claim's gold (its reason);
- which system wrote which answer (the two systems' names, versions and generator model);
- the pairwise pair, which may not carry its two answers' ids.

An analyst before their label sees none of these markers, and the answers list's filters by
judge verdict, gold, disagreement and system do not narrow their list. After their label an
analyst may see the judge's verdict and colleagues' labels (the project reveals after saving),
never gold or a system; every response that shows them has recorded a `Reveal`, so a later
change of the label is flagged `changed_after_reveal`. A lead sees every marker somewhere.

Each request runs in a transaction rolled back after it, so one world serves every request.
"""

import re
from dataclasses import dataclass

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import (
    Answer,
    Claim,
    Fact,
    Gold,
    Label,
    Membership,
    Passage,
    Project,
    Reveal,
    System,
    Verdict,
)
from annotate.services.comments import comment_add
from api.routes import api
from api.tokens import token_create
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.models import ReportSnapshot
from monitor.models import Alert, AnchorSet, MonitoredStream
from tests.api.conftest import ApiClient
from tests.factories import UserFactory
from tests.reliability.test_permissions import EXPECTED_ROLE, all_patterns, url_for
from testsets.models import SutRun, TestItem, TestSet

MARKERS = {
    "judge verdict": ("judge-Quillon",),
    "colleague label": ("colleague-Xylo", "colleague-note-Quibble"),
    "colleague comment": ("comment-Zephyr",),
    "gold": ("gold-reason-Tamarind",),
    "system": ("sys-Okapi", "sys-Narwhal", "v-okapi-1", "v-narwhal-2", "gen-Pangolin"),
}
# What an analyst may see once their own label on the claim is saved (and only with a Reveal).
REVEALABLE = ("judge verdict", "colleague label", "colleague comment")

# Web routes outside a project: every one is fetched too (no project data is expected on them).
OTHER_ROUTES = {
    "favicon",
    "login",
    "logout",
    "password_change",
    "password_change_done",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "annotate:project-list",
    "annotate:project-new",
    "metrics:glossary",
    "api-pages:tokens",
    "api-pages:token-revoke",
}
# The filters of the answers list that would tell an analyst a judge's verdict, gold,
# analysts' disagreement or a system, each with what it selects in this world (a lead's list).
FILTERS = {
    "verdict=NOT_IN_PILE": {"ans-okapi"},
    "verdict=SUPPORTED": {"ans-narwhal"},
    "verdict=CONTRADICTED": set(),
    "gold=yes": {"ans-okapi"},
    "gold=no": {"ans-narwhal"},
    "disagreement=on": {"ans-narwhal"},
    "system={a}": {"ans-okapi"},
    "system={b}": {"ans-narwhal"},
}
ROLES = ("before", "after", "lead")


def _world():
    project = Project.objects.create(
        slug="blind", name="Blind", queue_seed=5, reveal_after_save=True
    )
    people = {
        "before": UserFactory(username="ana-before"),
        "after": UserFactory(username="ana-after"),
        "lead": UserFactory(username="lead-bl"),
        "colleague": UserFactory(username="colleague-Xylo"),
        "colleague2": UserFactory(username="colleague-Yarrow"),
    }
    for name, user in people.items():
        role = "lead" if name == "lead" else "analyst"
        Membership.objects.create(project=project, user=user, role=role)
    okapi = System.objects.create(
        project=project,
        name="sys-Okapi",
        version="v-okapi-1",
        metadata={"generator_model": "gen-Pangolin"},
    )
    narwhal = System.objects.create(project=project, name="sys-Narwhal", version="v-narwhal-2")
    answers, claims = {}, {}
    for n, (key, system, text) in enumerate(
        [
            ("okapi", okapi, "Refunds take 14 days."),
            ("narwhal", narwhal, "Refunds take ten working days."),
        ]
    ):
        # ids of six digits, so that finding one in the pair's token means something
        answer = Answer.objects.create(
            pk=731001 + n,
            project=project,
            external_id=f"ans-{key}",
            position=n,
            question="How long do refunds take?",
            question_id="q-refunds",
            text=text,
            system=system,
        )
        Passage.objects.create(
            answer=answer,
            rank=1,
            source_id=f"doc-{n}",
            title="Refund policy",
            text="Refunds are processed within 14 days of the request.",
        )
        answers[key] = answer
        claims[key] = Claim.objects.create(
            project=project,
            answer=answer,
            text=text,
            position=0,
            queue_key=10 + n,
            labels_required=3,
        )
    Project.objects.filter(pk=project.pk).update(answers_count=2)  # as the import keeps it
    claim = claims["okapi"]
    Label.objects.create(claim=claim, annotator=people["after"], verdict=Verdict.CONTRADICTED)
    Label.objects.create(
        claim=claim,
        annotator=people["colleague"],
        verdict=Verdict.SUPPORTED,
        note="colleague-note-Quibble",
    )
    # a colleague's comment in the claim's thread (it may name a verdict)
    comment_add(
        claim=claim, author=people["colleague"], text="comment-Zephyr: I read it as SUPPORTED."
    )
    # The other answer's claim: two analysts disagree, no gold.
    for who, verdict in (("colleague", Verdict.SUPPORTED), ("colleague2", Verdict.CONTRADICTED)):
        Label.objects.create(claim=claims["narwhal"], annotator=people[who], verdict=verdict)
    Claim.objects.filter(pk__in=[c.pk for c in claims.values()]).update(label_count=2)
    Gold.objects.create(
        claim=claim,
        verdict=Verdict.CONTRADICTED,
        source=Gold.Source.ADJUDICATED,
        decided_by=people["lead"],
        reason="gold-reason-Tamarind",
    )
    judge = Judge.objects.create(
        project=project, name="judge-Quillon", backend="baseline", model="lexical-baseline"
    )
    run = JudgeRun.objects.create(
        judge=judge,
        project=project,
        backend="baseline",
        model="lexical-baseline",
        prompt_version="v-blind",
        status=JudgeRun.Status.DONE,
        total=2,
        done=2,
    )
    for key, verdict in (("okapi", Verdict.NOT_IN_PILE), ("narwhal", Verdict.SUPPORTED)):
        JudgeVerdict.objects.create(
            run=run, claim=claims[key], verdict=verdict, confidence=0.31, raw_response="raw"
        )
    passage = answers["okapi"].passages.get()
    fact = Fact.objects.create(
        answer=answers["okapi"],
        passage=passage,
        start=0,
        end=7,
        text="Refunds",
        created_by=people["lead"],
    )
    snapshot = ReportSnapshot.objects.create(project=project, judge=judge)
    # A test set under review, and a run of the system under test over it named after a
    # system: the run pages (leads only) show it; no test-set page an analyst reaches does.
    test_set = TestSet.objects.create(project=project, name="blind-set")
    test_item = TestItem.objects.create(
        test_set=test_set, external_id="t1", question="How long do refunds take?",
        answer="14 days.",
    )  # fmt: skip
    sut_run = SutRun.objects.create(
        project=project, test_set=test_set, endpoint="reference", system_name="sys-Okapi",
        system_version="v-okapi-1", status=SutRun.Status.DONE,
    )  # fmt: skip
    # a paused monitored stream with the claim in its anchor set and a drift alert (leads only)
    stream = MonitoredStream.objects.create(project=project, judge=judge, active=False)
    AnchorSet.objects.create(stream=stream).claims.set([claim])
    alert = Alert.objects.create(
        stream=stream, kind=Alert.Kind.JUDGE_DRIFT, raised_at=timezone.now(),
        sentence="The judge changed.", evidence={"rate": "specificity"},
    )  # fmt: skip
    tokens = {role: token_create(user=people[role], name="t").secret for role in ROLES}
    ids = {
        "answer_id": answers["okapi"].pk,
        "claim_id": claim.pk,
        "membership_id": Membership.objects.get(user=people["before"]).pk,
        "fact_id": fact.pk,
        "judge_id": judge.pk,
        "run_id": run.pk,
        "snapshot_id": snapshot.pk,
        "import_job_id": 0,
        "split_job_id": 0,
        "skip_id": 0,
        "token_id": 0,
        "generation_job_id": 0,
        "a": okapi.pk,
        "b": narwhal.pk,
        "testset_id": test_set.pk,
        "item_id": test_item.pk,
        "sut_run_id": sut_run.pk,
        "stream_id": stream.pk,
        "alert_id": alert.pk,
    }
    api_values = {
        "slug": project.slug,
        "username": "ana-before",
        "snapshot_id": snapshot.pk,
        "name": judge.name,
        "run_id": run.pk,
        "claim_id": claim.pk,
        "external_id": "ans-okapi",
    }
    return {
        "project": project,
        "people": people,
        "claims": claims,
        "answers": answers,
        "ids": ids,
        "tokens": tokens,
        "api_values": api_values,
    }


WEB = [p for p in all_patterns() if not p[0].startswith(("api:", "admin:"))]
ADMIN = [p for p in all_patterns() if p[0].startswith("admin:")]
HX = (("HX-Request", "true"),)


@dataclass(frozen=True)
class Ask:
    """One request of the matrix. `claim`: the claim its markers are about ("okapi", the one
    the after-label analyst labelled; "narwhal", labelled by neither analyst); `saves`: it
    saves the asker's own label on that claim first (then a reveal is legitimate)."""

    what: str
    method: str
    url: str
    headers: tuple = ()
    body: dict | None = None
    claim: str = "okapi"
    saves: bool = False
    api: bool = False


def _ids_for(world, claim: str) -> dict:
    answer = world["answers"][claim]
    return {**world["ids"], "answer_id": answer.pk, "claim_id": world["claims"][claim].pk}


def _web_asks(world) -> list[Ask]:
    """Every web route: a GET and its htmx partial where GET is allowed, else an empty POST
    (both tried: a 405 is skipped); the routes of one claim or answer for both claims; the
    pile's page alone; the labelling screen after a save; the answers list with each filter;
    a save of the asker's own label (web and htmx)."""
    slug = world["project"].slug
    asks = []
    for claim in ("okapi", "narwhal"):
        ids = _ids_for(world, claim)
        for name, route, _ in WEB:
            if claim == "narwhal" and not re.search(r"<int:(claim|answer)_id>", route):
                continue
            url = url_for(route, slug, ids)
            for method, headers in (("GET", ()), ("GET", HX), ("POST", HX)):
                asks.append(Ask(name, method, url, headers, claim=claim))
        for name, key in (
            ("annotate:label-claim", "claim_id"),
            ("annotate:answer-detail", "answer_id"),
        ):
            url = reverse(name, args=[slug, ids[key]]) + "?pile=1"
            asks.append(Ask(name, "GET", url, (*HX, ("HX-Target", "pile")), claim=claim))
        label_next = reverse("annotate:label-next", args=[slug])
        asks.append(
            Ask("annotate:label-next", "GET", f"{label_next}?saved={ids['claim_id']}", claim=claim)
        )
        save = reverse("annotate:label-save", args=[slug, ids["claim_id"]])
        for headers in ((), HX):
            asks.append(
                Ask(
                    "annotate:label-save",
                    "POST",
                    save,
                    headers,
                    {"verdict": "NOT_IN_PILE"},
                    claim,
                    saves=True,
                )
            )
    detail = reverse("annotate:project-detail", args=[slug])
    for query in FILTERS:
        asks.append(
            Ask("annotate:project-detail", "GET", f"{detail}?{query.format(**world['ids'])}")
        )
    for name, route, _ in ADMIN[:1]:  # the admin's index: staff only (no analyst is staff)
        asks.append(Ask(name, "GET", url_for(route, slug, world["ids"])))
    return asks


def _api_operations() -> list[tuple[str, str]]:
    schema = api.get_openapi_schema(path_prefix="/api/v1")
    return sorted(
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    )


def _api_asks(world) -> list[Ask]:
    """Every API operation (writes with an empty body: refused, or nothing to do), those of one
    claim or answer for both claims, and a save of the asker's own label."""
    asks = []
    for claim in ("okapi", "narwhal"):
        values = {
            **world["api_values"],
            "claim_id": world["claims"][claim].pk,
            "external_id": f"ans-{claim}",
        }
        for method, path in _api_operations():
            if claim == "narwhal" and not re.search(r"\{(claim_id|external_id)\}", path):
                continue
            body = None if method == "GET" else {}
            asks.append(
                Ask(
                    f"API {method} {path}",
                    method,
                    path.format(**values),
                    body=body,
                    claim=claim,
                    api=True,
                )
            )
        labels = "/api/v1/projects/{slug}/claims/{claim_id}/labels".format(**values)
        asks.append(
            Ask(
                "API POST labels (a save)",
                "POST",
                labels,
                body={"verdict": "NOT_IN_PILE"},
                claim=claim,
                saves=True,
                api=True,
            )
        )
    return asks


def _found(text: str) -> dict[str, list[str]]:
    return {
        kind: [m for m in words if m in text]
        for kind, words in MARKERS.items()
        if any(m in text for m in words)
    }


def _listed(html: str) -> set[str]:
    return set(re.findall(r'href="/p/blind/answers/\d+/">(ans-[a-z]+)</a>', html))


def _pair_field(html: str) -> str | None:
    found = re.search(r'name="pair" value="([^"]*)"', html)
    return found.group(1) if found else None


def _text(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def test_every_web_route_is_in_the_blindness_matrix():
    """A new route is either a project page (its role in test_permissions' EXPECTED_ROLE, and
    fetched below by every role) or one of the few pages outside a project named here."""
    names = {name for name, route, _ in WEB}
    project_names = {name for name, route, _ in WEB if "<slug:slug>" in route}
    assert project_names == set(EXPECTED_ROLE), sorted(project_names ^ set(EXPECTED_ROLE))
    assert names - project_names == OTHER_ROUTES, sorted((names - project_names) ^ OTHER_ROUTES)


def _send(client, api_client, ask: Ask):
    if ask.api:
        if ask.method == "GET":
            return api_client.get(ask.url)
        return api_client.send(ask.method, ask.url, ask.body)
    headers = dict(ask.headers)
    if ask.method == "GET":
        return client.get(ask.url, headers=headers)
    return client.post(ask.url, ask.body or {}, headers=headers)


@pytest.mark.django_db
def test_blindness_matrix_every_route_and_operation_for_each_role(figures):
    world = _world()
    people, claims = world["people"], world["claims"]
    answer_ids = {str(a.pk) for a in world["answers"].values()}
    asks = _web_asks(world) + _api_asks(world)
    leaks: list[str] = []
    seen_by_lead: dict[str, set[str]] = {kind: set() for kind in MARKERS}
    reveals_shown = requests = 0
    lists: dict[tuple[str, str], set[str]] = {}

    def check(role: str, ask: Ask, response) -> None:
        nonlocal reveals_shown
        # an error may quote the URL asked for (the API's problem "instance"): not a leak
        text = _text(response).replace(ask.url, "")
        what = f"{ask.method} {ask.url}{' (htmx)' if ask.headers else ''} [{ask.what}]"
        found = _found(text)
        if role == "lead":
            for kind, words in found.items():
                seen_by_lead[kind].update(words)
            return
        labelled = ask.saves or (role == "after" and ask.claim == "okapi")
        user = people[role]
        revealed = Reveal.objects.filter(claim=claims[ask.claim], user=user).exists()
        for kind, words in found.items():
            if not labelled or kind not in REVEALABLE:
                leaks.append(f"{role}: {what} shows the {kind} ({', '.join(words)})")
            elif not revealed:
                leaks.append(f"{role}: {what} shows the {kind} and records no Reveal")
            else:
                reveals_shown += 1
        unlabelled = Reveal.objects.filter(user=user)
        if role == "after":
            unlabelled = unlabelled.exclude(claim=claims["okapi"])
        if labelled:
            unlabelled = unlabelled.exclude(claim=claims[ask.claim])
        if unlabelled.exists():
            leaks.append(f"{role}: {what} recorded a Reveal of a claim they have not labelled")
        if (
            ask.saves
            and not Label.objects.filter(
                claim=claims[ask.claim], annotator=user, verdict=Verdict.NOT_IN_PILE
            ).exists()
        ):
            leaks.append(f"{role}: {what} did not save the label the matrix counts on")
        pair = _pair_field(text)
        if pair is not None and any(answer_id in pair for answer_id in answer_ids):
            leaks.append(f"{role}: {what} carries the pair's answer ids in its form ({pair})")
        if re.search(r'id="answer-(verdict|gold|disagreement|system)"', text):
            leaks.append(
                f"{role}: {what} offers a filter by judge verdict, gold, disagreement or system"
            )

    for role in ROLES:
        client = Client()
        client.force_login(people[role])
        api_client = ApiClient(world["tokens"][role])
        for ask in asks:
            with transaction.atomic():
                response = _send(client, api_client, ask)
                requests += 1
                if response.status_code != 405:
                    check(role, ask, response)
                    if ask.what == "annotate:project-detail" and not ask.headers:
                        lists[(role, ask.url)] = _listed(_text(response))
                transaction.set_rollback(True)  # the next request finds the world as built
            if ask.what == "logout":
                client.force_login(people[role])  # the POST signed the client out

    # The answers list: a filter never narrows an analyst's list; a lead's it does.
    detail = reverse("annotate:project-detail", args=[world["project"].slug])
    everything = {"ans-okapi", "ans-narwhal"}
    for query, selects in FILTERS.items():
        url = f"{detail}?{query.format(**world['ids'])}"
        for role in ("before", "after"):
            if lists[(role, url)] != everything:
                leaks.append(f"{role}: {url} narrows the list to {sorted(lists[(role, url)])}")
        assert lists[("lead", url)] == selects, (query, lists[("lead", url)])
    for role in ROLES:
        assert lists[(role, detail)] == everything, role

    figures.add(
        "blindness",
        web_routes=len(WEB),
        api_operations=len(_api_operations()),
        roles=len(ROLES),
        requests=requests,
        reveals_shown_with_a_reveal_recorded=reveals_shown,
        leaks_remaining=len(leaks),
    )
    assert leaks == [], "\n".join(leaks)
    # A lead still sees everything the analysts may not, somewhere.
    missing = {kind: set(words) - seen_by_lead[kind] for kind, words in MARKERS.items()}
    assert all(not words for kind, words in missing.items() if kind != "system"), missing
    assert seen_by_lead["system"] >= {"sys-Okapi", "sys-Narwhal"}, seen_by_lead
    # The analysts were really shown reveals once labelled (the matrix is not blind by accident).
    assert reveals_shown > 0
