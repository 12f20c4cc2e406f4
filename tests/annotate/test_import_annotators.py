"""Imported labels are not users: a file's annotator names stay within the project.

The finding: an import looked its `annotator` names up among all accounts, so a lead could file
labels under a colleague's name and silently make them a member, and "users created" told
whether a username exists. Now a name is an imported annotator of the project ("carol
(imported)") unless an owner maps it to a member on that import.
"""

import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, Gold, ImportJob, Label, Membership, Role
from interchange.services.exports import claims_export
from interchange.services.imports import AnnotatorMapError, ImportFailed, answers_import
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
PILE = "Refunds are processed within 14 days."


def _record(answer_id: str, *labels: tuple[str, str], gold_by: str = "") -> dict:
    claim = {
        "text": "Refunds take 14 days.",
        "labels": [
            {
                "annotator": name,
                "verdict": verdict,
                **(
                    {"quote": {"passage": 1, "start": 0, "end": len(PILE), "text": PILE}}
                    if verdict != "NOT_IN_PILE"
                    else {}
                ),
            }
            for name, verdict in labels
        ],
    }
    if gold_by:
        claim["gold"] = {
            "verdict": "SUPPORTED",
            "source": "adjudicated",
            "reason": "Policy 7.",
            "decided_by": gold_by,
        }
    return {
        "id": answer_id,
        "question": "How long do refunds take?",
        "answer": "Refunds take 14 days.",
        "pile": [{"id": "policy-7", "text": PILE}],
        "claims": [claim],
    }


def _file(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _member(project, username: str, role=Role.ANALYST):
    user = User.objects.create(username=username)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _upload(client, project, content: bytes, mapping: str = ""):
    data = {"file": SimpleUploadedFile("labels.jsonl", content), "format": "auto"}
    if mapping:
        data["annotator_map"] = mapping
    return client.post(reverse("annotate:import", args=[project.slug]), data)


def test_import_files_an_existing_non_members_name_under_an_imported_annotator():
    project = ProjectFactory()
    elsewhere = ProjectFactory()
    carol = User.objects.create(username="carol")
    Membership.objects.create(project=elsewhere, user=carol, role=Role.LEAD)
    users_before = set(User.objects.values_list("pk", flat=True))
    memberships_before = set(Membership.objects.values_list("pk", "project_id", "user_id", "role"))

    result = answers_import(
        project=project,
        path_or_file=io.BytesIO(
            _file(_record("r1", ("carol", "SUPPORTED")), _record("r2", ("dave", "NOT_IN_PILE")))
        ),
        format="native",
    )

    label = Label.objects.get(claim__answer__external_id="r1")
    assert label.annotator_id is None
    assert label.imported_annotator.name == "carol"
    assert label.imported_annotator.project == project
    assert label.annotator_name == "carol (imported)"
    # No account created, none touched, no member added.
    assert set(User.objects.values_list("pk", flat=True)) == users_before
    assert (
        set(Membership.objects.values_list("pk", "project_id", "user_id", "role"))
        == memberships_before
    )
    assert not Membership.objects.filter(project=project).exists()
    assert result.annotator_names == 2
    assert "annotator name" in str(result)
    assert "created" not in str(result)


def test_import_gold_decided_by_a_name_creates_no_account():
    project = ProjectFactory()
    User.objects.create(username="carol")
    users_before = User.objects.count()
    answers_import(
        project=project,
        path_or_file=io.BytesIO(_file(_record("r1", ("ann", "SUPPORTED"), gold_by="carol"))),
        format="native",
    )
    gold = Gold.objects.get(claim__answer__external_id="r1")
    assert gold.decided_by_id is None
    assert str(gold.imported_decided_by) == "carol (imported)"
    assert User.objects.count() == users_before


def _result_text(response) -> str:
    page = response.content.decode()
    section = re.search(r'data-testid="import-result">(.*?)</div>', page, re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section)).strip()


def test_import_page_and_counts_say_the_same_whether_or_not_a_name_is_an_account():
    User.objects.create(username="carol")  # an account; "zed" is none
    pages, results = [], []
    for name in ("carol", "zed"):
        project = ProjectFactory()
        lead = _member(project, f"lead-{name}", Role.LEAD)
        response = _upload(_client(lead), project, _file(_record("r1", (name, "SUPPORTED"))))
        assert response.status_code == 200
        pages.append(_result_text(response))
        results.append(ImportJob.objects.get(project=project).result)
    assert pages[0] == pages[1]
    assert "1 label by 1 annotator name" in pages[0]
    assert "created" not in pages[0]
    assert "new analyst" not in pages[0]
    assert results[0] == results[1]
    assert "users_created" not in results[0]


def test_an_owner_maps_an_annotator_name_to_a_member():
    project = ProjectFactory()
    owner = _member(project, "olive", Role.OWNER)
    carol = _member(project, "carol")
    response = _upload(
        _client(owner),
        project,
        _file(_record("r1", ("c.smith", "SUPPORTED"), ("ann", "SUPPORTED"))),
        mapping="c.smith = carol",
    )
    assert response.status_code == 200
    mapped = Label.objects.get(annotator=carol)
    assert mapped.imported_annotator_id is None
    assert mapped.annotator_name == "carol"
    assert Label.objects.get(imported_annotator__name="ann").annotator_id is None
    assert Membership.objects.get(project=project, user=carol).labels_saved == 1
    assert Membership.objects.filter(project=project).count() == 2  # nobody added


@pytest.mark.parametrize("target", ["carol", "zed"], ids=["account-not-member", "no-account"])
def test_mapping_a_name_to_a_non_member_is_refused_and_nothing_is_imported(target):
    project = ProjectFactory()
    owner = _member(project, "olive", Role.OWNER)
    carol = User.objects.create(username="carol")  # exists, not a member
    response = _upload(
        _client(owner), project, _file(_record("r1", ("c.smith", "SUPPORTED"))), f"c.smith={target}"
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert f"{target!r} is not a member of this project" in page.replace("&#x27;", "'")
    assert not Answer.objects.filter(project=project).exists()
    assert not Label.objects.exists()
    assert not ImportJob.objects.filter(project=project).exists()
    assert not Membership.objects.filter(user=carol).exists()


def test_the_service_refuses_a_mapping_to_a_non_member_with_nothing_imported():
    project = ProjectFactory()
    User.objects.create(username="carol")
    with pytest.raises(AnnotatorMapError, match="'carol' is not a member of this project"):
        answers_import(
            project=project,
            path_or_file=io.BytesIO(_file(_record("r1", ("c.smith", "SUPPORTED")))),
            format="native",
            annotator_map={"c.smith": "carol"},
        )
    assert not Answer.objects.filter(project=project).exists()


def test_a_lead_who_is_not_an_owner_cannot_map_names():
    project = ProjectFactory()
    lead = _member(project, "lea", Role.LEAD)
    _member(project, "carol")
    response = _upload(
        _client(lead), project, _file(_record("r1", ("c.smith", "SUPPORTED"))), "c.smith=carol"
    )
    assert response.status_code == 400
    assert "Only an owner" in response.content.decode()
    assert not Label.objects.exists()


def test_two_names_mapped_to_one_member_on_one_claim_are_a_clear_error():
    project = ProjectFactory()
    carol = _member(project, "carol")
    with pytest.raises(ImportFailed) as failed:
        answers_import(
            project=project,
            path_or_file=io.BytesIO(_file(_record("r1", ("c1", "SUPPORTED"), ("c2", "SUPPORTED")))),
            format="native",
            annotator_map={"c1": "carol", "c2": "carol"},
        )
    assert "already labelled this claim" in str(failed.value.issues)
    assert not Label.objects.filter(annotator=carol).exists()


def test_export_then_import_keeps_the_labels_and_imported_annotator_names():
    source = ProjectFactory()
    bob = _member(source, "bob")
    answers_import(
        project=source,
        path_or_file=io.BytesIO(
            _file(
                _record("r1", ("alice", "SUPPORTED"), ("bob", "NOT_IN_PILE")),
                _record("r2", ("alice", "NOT_IN_PILE")),
            )
        ),
        format="native",
        annotator_map={"bob": "bob"},
    )
    assert Label.objects.get(claim__answer__external_id="r1", annotator=bob)
    exported = io.StringIO()
    claims_export(project=source, format="jsonl", out=exported)
    names = {
        label["annotator"]
        for line in exported.getvalue().splitlines()
        for claim in json.loads(line)["claims"]
        for label in claim["labels"]
    }
    assert names == {"alice (imported)", "bob"}

    copy = ProjectFactory()
    answers_import(
        project=copy, path_or_file=io.BytesIO(exported.getvalue().encode()), format="native"
    )

    def labels(project):
        return sorted(
            (label.claim.answer.external_id, label.annotator_name, label.verdict)
            for label in Label.objects.filter(claim__project=project).select_related(
                "claim__answer", "annotator", "imported_annotator"
            )
        )

    assert labels(source) == [
        ("r1", "alice (imported)", "SUPPORTED"),
        ("r1", "bob", "NOT_IN_PILE"),
        ("r2", "alice (imported)", "NOT_IN_PILE"),
    ]
    # In the copy every name is an imported annotator, with the same name.
    assert labels(copy) == [
        ("r1", "alice (imported)", "SUPPORTED"),
        ("r1", "bob (imported)", "NOT_IN_PILE"),
        ("r2", "alice (imported)", "NOT_IN_PILE"),
    ]
    again = io.StringIO()
    claims_export(project=copy, format="jsonl", out=again)
    assert {
        label["annotator"]
        for line in again.getvalue().splitlines()
        for claim in json.loads(line)["claims"]
        for label in claim["labels"]
    } == {"alice (imported)", "bob (imported)"}


def test_the_adjudication_page_shows_imported_annotators_as_imported():
    project = ProjectFactory(analysts_per_claim=2)
    lead = _member(project, "lea", Role.LEAD)
    answers_import(
        project=project,
        path_or_file=io.BytesIO(
            _file(_record("r1", ("alice", "SUPPORTED"), ("bob", "NOT_IN_PILE")))
        ),
        format="native",
    )
    page = _client(lead).get(reverse("annotate:adjudicate", args=[project.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "alice (imported)" in html
    assert "bob (imported)" in html
