"""Pairwise preferences as data (issue 33 item 4): people's marks imported from a file —
RAGChecker's human-study JSON, native JSON Lines and CSV — by `manage.py import_preferences`,
the API and the compare page, read by the comparison's "Pairwise, analysts" block.

The expected figures are derived by hand below (the grades are chosen so each is a small
fraction) and checked against scikit-learn's Cohen's kappa, scipy's binomial test and
statsmodels' Wilson interval; none comes from the product's own functions.
"""

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from annotate.models import ImportedAnnotator, PairwisePreference, Role, System
from api.tokens import token_create
from interchange.importers.issues import ImportFailed
from interchange.services.preference_imports import preferences_import
from metrics.services.compare import systems_compare
from tests.compare.builders import answer_record, import_records
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

A, B = "bm25_llama3_8b", "e5_mistral_gpt_4"  # RAGChecker's model1 and model2 names
# (annotator 1, annotator 2) overall grades, −2..2, positive = model2 (B) better.
GRADES = {
    "q1": (2, 1),  # B B
    "q2": (1, 2),  # B B
    "q3": (-1, -2),  # A A
    "q4": (0, 0),  # tie tie
    "q5": (1, 0),  # B tie
    "q6": (2, -1),  # B A   (opposite directions)
    "q7": (-2, -1),  # A A
    "q8": (1, 1),  # B B
    "q9": (0, -1),  # tie A
    "q10": (2, 2),  # B B
}


def _side(grade: int) -> str:
    return "B" if grade > 0 else "A" if grade < 0 else "tie"


# By hand from GRADES:
# annotator 1: B B A tie B B A B tie B  → B 6, A 2, tie 2
# annotator 2: B B A tie tie A A B A B  → B 4, A 4, tie 2
# agree on q1 q2 q3 q4 q7 q8 q10: 7 of 10; p_e = (6·4 + 2·4 + 2·2)/100 = 0.36
KAPPA = (0.7 - 0.36) / (1 - 0.36)  # 0.53125
RAW_AGREEMENT, OPPOSITE = 0.7, 0.1
# 20 marks, 4 ties (q4 twice, q5, q9), 16 decided of which B 10.
DECIDED_B, TIES_HALF = 10 / 16, (10 + 0.5 * 4) / 20
# Per question, B marks − A marks: q1 +2, q2 +2, q3 −2, q4 0, q5 +1, q6 0, q7 −2, q8 +2,
# q9 −1, q10 +2 → B wins 5, A wins 3, 2 even; two-sided exact: 2·P(X ≥ 5 | 8, ½) = 2·93/256.
SIGN_P = 2 * (56 + 28 + 8 + 1) / 256
STRENGTH = (6 + 1) / 20  # the grades' sum over both annotators, over 20 marks


@pytest.fixture
def project():
    project = ProjectFactory(slug="prefs", name="Prefs")
    import_records(
        project,
        [answer_record(q, system, [("SUPPORTED", None)]) for q in GRADES for system in (A, B)],
    )
    return project


def _systems(project):
    return (
        System.objects.get(project=project, name=A),
        System.objects.get(project=project, name=B),
    )


def ragchecker_records(grades=GRADES):
    """The shape of RAGChecker's data/meta_evaluation/human_labeled_data.json: a JSON array,
    each instance twice in a row (its two annotators), no annotator field."""
    records = []
    for instance, (q, pair) in enumerate(grades.items()):
        for grade in pair:
            records.append(
                {
                    "instance_id": instance,
                    "dataset": "kiwi",
                    "query_id": q,
                    "query": f"Question {q}?",
                    "gt_answer": "The reference answer.",
                    "model1": {"model_name": A, "response": "A's answer.", "critiques": "…"},
                    "model2": {"model_name": B, "response": "B's answer.", "critiques": "…"},
                    "correctness_label": 0,
                    "completeness_label": -grade,
                    "overall_label": grade,
                }
            )
    return records


def native_rows(grades=GRADES):
    return [
        {
            "question_id": q,
            "system_a": A,
            "system_b": B,
            "annotator": f"ann{who + 1}",
            "preference": _side(grade),
            "strength": grade,
        }
        for q, pair in grades.items()
        for who, grade in enumerate(pair)
    ]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _named(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def _block(project):
    a, b = _systems(project)
    return systems_compare(project=project, a=a, b=b)


def _hand_jackknife_kappa(first, second):
    """Delete-one-question jackknife of scikit-learn's kappa, one comparison per question."""
    g = len(first)
    left_out = np.array(
        [cohen_kappa_score(np.delete(first, i), np.delete(second, i)) for i in range(g)]
    )
    se = np.sqrt((g - 1) / g * np.sum((left_out - left_out.mean()) ** 2))
    half = scipy_stats.t.ppf(0.975, g - 1) * se
    kappa = cohen_kappa_score(first, second)
    return max(kappa - half, -1.0), min(kappa + half, 1.0)


def _hand_decided_wilson():
    """Wilson's interval for 10 of 16 decided marks at the effective size clustered by
    question (the CR1 design effect), by hand, Wilson from statsmodels."""
    marks = [(q, _side(g) == "B") for q, pair in GRADES.items() for g in pair if _side(g) != "tie"]
    n, theta = len(marks), DECIDED_B
    sums: dict[str, float] = {}
    for q, is_b in marks:
        sums[q] = sums.get(q, 0.0) + (float(is_b) - theta)
    g = len(sums)
    cr1 = g / (g - 1) * sum(v * v for v in sums.values()) / n**2
    n_eff = n / max(cr1 / (theta * (1 - theta) / n), 1.0)
    return proportion_confint(theta * n_eff, n_eff, alpha=0.05, method="wilson")


def test_a_ragchecker_file_reproduces_the_hand_computed_kappa_and_b_share(project, tmp_path):
    path = tmp_path / "human_labeled_data.json"
    path.write_text(json.dumps(ragchecker_records(), indent=2))
    out = io.StringIO()
    call_command("import_preferences", str(path), "--project", "prefs", stdout=out)
    assert "20 preferences (ragchecker, json) on 10 pairs by 2 annotators: 20 new" in out.getvalue()
    assert sorted(ImportedAnnotator.objects.values_list("name", flat=True)) == [
        "annotator-1",
        "annotator-2",
    ]
    result = _block(project)
    human = result["pairwise_human"]
    assert (human["n_preferences"], human["n_pairs"], human["n_analysts"]) == (20, 10, 2)
    assert human["sources"] == {"screen": 0, "file": 20}
    assert human["counts"] == {"B": 10, "A": 6, "tie": 4}
    assert human["preference_b"]["value"] == pytest.approx(TIES_HALF)

    decided = human["decided_b"]
    assert (decided["n_decided"], decided["n_ties"]) == (16, 4)
    assert decided["value"] == pytest.approx(DECIDED_B)
    assert decided["ci"] == pytest.approx(list(_hand_decided_wilson()))
    sign = decided["sign_test"]
    assert (sign["questions_b"], sign["questions_a"], sign["questions_even"]) == (5, 3, 2)
    assert sign["p_value"] == pytest.approx(SIGN_P)
    assert scipy_stats.binomtest(5, 8, 0.5).pvalue == pytest.approx(SIGN_P)

    agreement = human["analysts_agreement"]
    assert (agreement["comparisons"], agreement["n_pairs"]) == (10, 10)
    assert agreement["raw_agreement"]["value"] == pytest.approx(RAW_AGREEMENT)
    assert agreement["opposite"]["value"] == pytest.approx(OPPOSITE)
    first = [_side(pair[0]) for pair in GRADES.values()]
    second = [_side(pair[1]) for pair in GRADES.values()]
    assert abs(KAPPA - 0.53125) < 1e-12
    assert cohen_kappa_score(first, second) == pytest.approx(KAPPA)
    assert agreement["kappa"]["value"] == pytest.approx(KAPPA)
    assert agreement["kappa"]["ci"] == pytest.approx(list(_hand_jackknife_kappa(first, second)))

    assert human["strength_b"]["value"] == pytest.approx(STRENGTH)
    # The comparison's finding says what the people preferred, with its test. 10 of 16 is
    # 62.5%, read 63%: whole percents rounded half up (metrics/format.py), not Python's 62.
    assert (
        f"People prefer {B} (B) on 63% [{100 * decided['ci'][0]:.0f}, "
        f"{100 * decided['ci'][1]:.0f}] of 16 decided marks (10 pairs, 4 ties set aside; "
        f"sign test p = {SIGN_P:.3f})."
    ) in result["finding"]
    assert "they agree on 70%" in human["finding"]
    assert "point opposite ways on 10%" in human["finding"]
    assert f"Cohen's kappa {KAPPA:.2f} [" in human["finding"]


def test_another_ragchecker_grade_is_read_when_chosen(project, tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(ragchecker_records()))
    call_command(
        "import_preferences", str(path), "--project", "prefs", "--aspect", "completeness_label"
    )
    # completeness is the negated overall grade: A and B exchange.
    assert _block(project)["pairwise_human"]["counts"] == {"B": 6, "A": 10, "tie": 4}


@pytest.mark.parametrize(("encode", "name"), [(_jsonl, "marks.jsonl"), (_csv, "marks.csv")])
def test_native_jsonl_and_csv_give_the_same_figures_and_import_again_changes_nothing(
    project, encode, name
):
    result = preferences_import(project=project, path_or_file=_named(encode(native_rows()), name))
    assert (result.created, result.updated, result.unchanged) == (20, 0, 0)
    human = _block(project)["pairwise_human"]
    assert human["analysts_agreement"]["kappa"]["value"] == pytest.approx(KAPPA)
    assert human["decided_b"]["value"] == pytest.approx(DECIDED_B)
    assert human["strength_b"]["value"] == pytest.approx(STRENGTH)
    again = preferences_import(project=project, path_or_file=_named(encode(native_rows()), name))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 20)
    corrected = native_rows({**GRADES, "q6": (2, 1)})  # annotator 2 now agrees on q6
    fixed = preferences_import(project=project, path_or_file=_named(encode(corrected), name))
    assert (fixed.created, fixed.updated, fixed.unchanged) == (0, 1, 19)
    assert PairwisePreference.objects.count() == 20
    assert _block(project)["pairwise_human"]["analysts_agreement"]["raw_agreement"][
        "value"
    ] == pytest.approx(0.8)


def test_preference_or_strength_alone_and_a_system_by_version(project):
    rows = [
        {"question_id": "q1", "system_a": A, "system_b": B, "annotator": "x", "preference": "b"},
        {
            "question_id": "q2",
            "system_a": {"name": A},
            "system_b": B,
            "annotator": "x",
            "strength": -1,
        },
        {"question_id": "q3", "system_a": B, "system_b": A, "annotator": "x", "preference": "A"},
        {"question_id": "q4", "system_a": A, "system_b": B, "annotator": "x", "preference": "same"},
    ]
    preferences_import(project=project, path_or_file=_named(_jsonl(rows), "p.jsonl"))
    a, b = _systems(project)
    got = {
        p.question_key: (p.preferred_system_id, p.strength, p.choice, p.left_system_id)
        for p in PairwisePreference.objects.all()
    }
    # q3 names B as its system A: its "A" is the system called e5_mistral_gpt_4.
    assert got == {
        "q1": (b.pk, None, "import", None),
        "q2": (a.pk, 1, "import", None),
        "q3": (b.pk, None, "import", None),
        "q4": (None, None, "import", None),
    }


def test_a_file_with_any_problem_imports_nothing_and_names_each_line_and_field(project):
    good = {"question_id": "q1", "system_a": A, "system_b": B, "annotator": "ok"}
    rows = [
        {**good, "preference": "B"},
        {**good, "annotator": "u2", "system_b": "nope", "preference": "B"},
        {**good, "annotator": "u3", "question_id": "q99", "preference": "A"},
        {**good, "annotator": "u4", "strength": 3},
        {**good, "annotator": "u5", "preference": "C"},
        {**good, "annotator": "u6", "preference": "A", "strength": 2},
        {**good, "preference": "A"},
        {**good, "annotator": "u8"},
        {**good, "annotator": "u9", "system_b": A, "preference": "B"},
    ]
    with pytest.raises(ImportFailed) as failed:
        preferences_import(project=project, path_or_file=_named(_jsonl(rows), "bad.jsonl"))
    said = [str(issue) for issue in failed.value.issues]
    assert said == [
        "line 4, field strength: expected a whole number from -2 to 2, got 3",
        'line 5, field preference: expected A, B or tie, got "C"',
        "line 6, field strength: 2 grades B but the preference is A: a positive strength means "
        "B is better, a negative one A, 0 a tie",
        "line 8, field preference: missing: give the preference (A, B or tie) or a strength",
        f"line 9, field system_b: names the same system as system_a ({A})",
        f'line 2, field system_b: no system "nope" in this project (systems: {A}, {B})',
        f'line 3, field question_id: {A} (system_a) has no answer to question "q99" in this '
        "project: import its answers first",
        f'line 3, field question_id: {B} (system_b) has no answer to question "q99" in this '
        "project: import its answers first",
        'line 7, field annotator: "ok" already marked this pair in line 1 (one preference '
        "per annotator and pair)",
    ]
    assert PairwisePreference.objects.count() == 0
    assert ImportedAnnotator.objects.count() == 0
    with pytest.raises(CommandError, match="There is no project 'nope'"):
        call_command("import_preferences", "/nonexistent.jsonl", "--project", "nope")
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_preferences", "/nonexistent.jsonl", "--project", "prefs")


def test_the_command_says_nothing_was_imported_with_the_lines(project, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(_csv([{**native_rows()[0], "strength": "zz"}]))
    with pytest.raises(CommandError) as failed:
        call_command("import_preferences", str(path), "--project", "prefs")
    assert str(failed.value).startswith("Nothing was imported: 1 problem(s) in the file.")
    assert 'line 2, field strength: expected a whole number from -2 to 2, got "zz"' in str(
        failed.value
    )


def test_screen_marks_and_file_marks_are_one_pool(project):
    """An analyst's blind mark and a file's mark on the same pair are two people's marks."""
    from annotate.selectors import pairwise_pairs
    from annotate.services.pairwise import pairwise_preference_save

    a, b = _systems(project)
    low, high = (a, b) if a.pk < b.pk else (b, a)
    analyst = UserFactory(username="screen-analyst")
    MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    pair = next(
        p for p in pairwise_pairs(project=project, system_1=low, system_2=high) if p.key == "q1"
    )
    pairwise_preference_save(
        project=project,
        analyst=analyst,
        system_1=low,
        system_2=high,
        answer_ids=(pair.answer_1, pair.answer_2),
        choice="tie",
    )
    rows = [
        {"question_id": "q1", "system_a": A, "system_b": B, "annotator": "f", "preference": "B"}
    ]
    preferences_import(project=project, path_or_file=_named(_jsonl(rows), "p.jsonl"))
    human = _block(project)["pairwise_human"]
    assert human["sources"] == {"screen": 1, "file": 1}
    assert human["n_analysts"] == 2
    agreement = human["analysts_agreement"]
    assert (agreement["comparisons"], agreement["raw_agreement"]["value"]) == (1, 0.0)
    assert agreement["opposite"]["value"] == 0.0  # a tie against B is not opposite


# -- the API -----------------------------------------------------------------------------------


def _api(client, user, body, content_type="application/json"):
    token = token_create(user=user, name="t").secret
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.post(
        "/api/v1/projects/prefs/preferences",
        data=data,
        content_type=content_type,
        headers={"Authorization": f"Bearer {token}"},
    )


def test_api_imports_preferences_idempotently_for_leads_only(client, project):
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    analyst = MembershipFactory(project=project, role=Role.ANALYST).user
    rows = native_rows()
    first = _api(client, lead, rows)
    assert first.status_code == 201, first.content
    assert first.json() == {
        "created": 20,
        "updated": 0,
        "unchanged": 0,
        "pairs": 10,
        "annotators": 2,
    }
    again = _api(client, lead, rows)
    assert (again.status_code, again.json()["unchanged"]) == (200, 20)
    as_csv = _api(client, lead, _csv(rows), content_type="text/csv")
    assert (as_csv.status_code, as_csv.json()["unchanged"]) == (200, 20)
    assert _api(client, analyst, rows).status_code == 404
    assert PairwisePreference.objects.count() == 20


def test_api_refuses_a_bad_body_naming_the_item_and_field(client, project):
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    rows = native_rows()[:2] + [{**native_rows()[2], "system_b": "nope"}]
    response = _api(client, lead, rows)
    assert response.status_code == 422
    problem = response.json()
    assert problem["errors"][0]["index"] == 2
    assert problem["errors"][0]["field"] == "system_b"
    assert "item 2, field system_b: no system" in problem["detail"]
    assert _api(client, lead, {"not": "an array"}).status_code == 422
    assert _api(client, lead, "x", content_type="text/plain").status_code == 415
    assert PairwisePreference.objects.count() == 0


# -- the compare page ----------------------------------------------------------------------------


def test_compare_page_imports_a_file_and_shows_the_figures(client, project):
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    a, b = _systems(project)
    client.force_login(lead)
    compare = reverse("metrics:compare", args=["prefs"])
    page = client.get(compare, {"a": a.pk, "b": b.pk}).text
    assert 'data-testid="preferences-import-form"' in page
    upload = reverse("annotate:import-preferences", args=["prefs"])
    handle = _named(json.dumps(ragchecker_records()).encode(), "human.json")
    response = client.post(
        upload, {"file": handle, "a": a.pk, "b": b.pk, "format": "auto", "aspect": "overall_label"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{compare}?a={a.pk}&b={b.pk}"
    page = client.get(response["Location"]).text
    assert "Imported 20 preferences (ragchecker, json) on 10 pairs by 2 annotators" in page
    assert "B share of the decided marks" in page
    assert "Cohen&#x27;s kappa between analysts" in page or "Cohen's kappa between analysts" in page
    assert f"{KAPPA:.2f}" in page
    bad = _named(_jsonl([{**native_rows()[0], "system_a": "nope"}]), "bad.jsonl")
    response = client.post(
        upload,
        {"file": bad, "a": a.pk, "b": b.pk, "format": "auto", "aspect": "overall_label"},
        follow=True,
    )
    assert "Nothing was imported: 1 problem(s) in the file" in response.text
    assert "line 1, field system_a: no system" in response.text
    assert PairwisePreference.objects.count() == 20


def test_analysts_cannot_import_preferences(client, project):
    analyst = MembershipFactory(project=project, role=Role.ANALYST).user
    client.force_login(analyst)
    upload = reverse("annotate:import-preferences", args=["prefs"])
    handle = _named(_jsonl(native_rows()), "p.jsonl")
    response = client.post(upload, {"file": handle, "format": "auto", "aspect": "overall_label"})
    assert response.status_code in (403, 404)
    assert PairwisePreference.objects.count() == 0
