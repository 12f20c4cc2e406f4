"""The analysts' blind pairwise screen (annotate/views/pairwise.py): two systems' answers to one
question side by side, each with its own pile, labelled only Left and Right, in an order drawn
per analyst and pair and stable on reload; a / b / = resolve to the system shown on that side.

Which answer is whose is read from the page itself (each answer's text and pile are unique to
its system here), never from the product's side-drawing function."""

import re

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotate.models import Answer, PairwisePreference, Passage, System
from annotate.pairwise import pair_token
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

N = 24
SECRET_WORDS = ["zebra-retriever", "v9-secret", "quokka-llm-7b", "ocelot-index", "v10-hidden"]


@pytest.fixture
def world():
    project = ProjectFactory(name="Pairs")
    one = System.objects.create(
        project=project,
        name="zebra-retriever",
        version="v9-secret",
        metadata={"generator_model": "quokka-llm-7b"},
    )
    two = System.objects.create(project=project, name="ocelot-index", version="v10-hidden")
    texts = {}
    for i in range(N):
        for system, word in ((one, "first"), (two, "second")):
            answer = Answer.objects.create(
                project=project,
                external_id=f"{word}-{i}",
                position=i,
                question=f"Question number {i}?",
                question_id=f"q{i:02d}",
                text=f"Answer text {word} {i}.",
                system=system,
            )
            Passage.objects.create(answer=answer, rank=1, text=f"Pile passage {word} {i}.")
            texts[answer.text] = system
    # A third system answering no shared question does not make a queue with them.
    System.objects.create(project=project, name="lonely", version="0")
    analyst = MembershipFactory(project=project, role="analyst").user
    return {"project": project, "one": one, "two": two, "texts": texts, "analyst": analyst}


def _url(world, name="annotate:pairwise"):
    return reverse(name, args=[world["project"].slug, world["one"].pk, world["two"].pk])


def _sides(html: str) -> tuple[str, str]:
    """The answer texts in the Left and the Right section of the page."""
    found = []
    for slot in ("left", "right"):
        section = re.search(rf'data-testid="pairwise-{slot}">(.*?)</section>', html, re.S).group(1)
        shown = re.search(r'class="answer-text"[^>]*>(.*?)</p>', section, re.S).group(1)
        found.append(re.sub(r"</?mark[^>]*>", "", shown))  # the word diff's highlights
    return found[0], found[1]


def _highlighted(html: str, slot: str) -> list[str]:
    section = re.search(rf'data-testid="pairwise-{slot}">(.*?)</section>', html, re.S).group(1)
    return re.findall(r'<mark class="diff">([^<]*)</mark>', section)


def _pair(html: str) -> str:
    return re.search(r'name="pair" value="([^"]+)"', html).group(1)


def test_pairwise_screen_names_no_system(client, world):
    client.force_login(world["analyst"])
    pages = [
        client.get(_url(world)),
        client.get(_url(world), headers={"HX-Request": "true"}),
        client.get(reverse("annotate:pairwise-index", args=[world["project"].slug])),
    ]
    response = client.post(
        _url(world, "annotate:pairwise-save"), {"pair": _pair(pages[0].text), "choice": "left"}
    )
    pages.append(client.get(response["Location"]))
    for page in pages:
        assert page.status_code == 200
        lowered = page.text.lower()
        for word in SECRET_WORDS:
            assert word not in lowered, word
    assert "Left" in pages[0].text
    assert "Right" in pages[0].text
    # The queue exists and the page shows an answer and a pile on each side.
    left, right = _sides(pages[0].text)
    assert {world["texts"][left], world["texts"][right]} == {world["one"], world["two"]}


def test_pairwise_each_side_shows_its_own_pile(client, world):
    client.force_login(world["analyst"])
    html = client.get(_url(world)).text
    for slot, text in zip(("left", "right"), _sides(html), strict=True):
        section = re.search(rf'data-testid="pairwise-{slot}">(.*?)</section>', html, re.S).group(1)
        word, i = re.match(r"Answer text (\w+) (\d+)\.", text).groups()
        assert f"Pile passage {word} {i}." in section
        other = "second" if word == "first" else "first"
        assert f"Pile passage {other}" not in section


def test_pairwise_sides_random_across_pairs_and_analysts_stable_on_reload(client, world):
    """Every pair visited through the page (by its token); for each analyst, how many pairs
    show the first system on the left. A fair coin per pair: neither all nor none of 24 (the
    chance of that is 2·2⁻²⁴ per analyst); two analysts differ on some pair; a reload shows the
    same sides."""
    project = world["project"]
    others = [MembershipFactory(project=project, role="analyst").user for _ in range(2)]
    lead = MembershipFactory(project=project, role="lead").user
    pairs = list(
        zip(
            Answer.objects.filter(system=world["one"]).order_by("id"),
            Answer.objects.filter(system=world["two"]).order_by("id"),
            strict=True,
        )
    )
    layouts = {}
    for user in [world["analyst"], *others, lead]:
        client.force_login(user)
        layout = []
        for a, b in pairs:
            # the pair as this user's pages name it (its token is bound to the user)
            token = pair_token(analyst_id=user.pk, answer_1_id=a.pk, answer_2_id=b.pk)
            html = client.get(_url(world), {"pair": token}).text
            left, _ = _sides(html)
            layout.append(world["texts"][left] == world["one"])
            assert _sides(client.get(_url(world), {"pair": token}).text)[0] == left  # reload
        layouts[user.pk] = layout
        assert 0 < sum(layout) < N, layout
    assert len({tuple(layout) for layout in layouts.values()}) > 1


def test_pairwise_choice_resolves_to_the_system_on_that_side(client, world):
    client.force_login(world["analyst"])
    expected = []
    for choice in ("left", "right", "tie"):
        html = client.get(_url(world)).text
        left, right = _sides(html)
        pair = _pair(html)
        response = client.post(
            _url(world, "annotate:pairwise-save"), {"pair": pair, "choice": choice}
        )
        assert response.status_code == 302
        preferred = {"left": world["texts"][left], "right": world["texts"][right], "tie": None}
        # the pair's answers, system_1's first, read from the two texts the page showed
        shown = {world["texts"][text]: text for text in (left, right)}
        answers = tuple(
            Answer.objects.get(text=shown[system]).pk for system in (world["one"], world["two"])
        )
        expected.append((answers, choice, world["texts"][left], preferred[choice]))
    stored = list(
        PairwisePreference.objects.filter(analyst=world["analyst"])
        .order_by("id")
        .values_list(
            "answer_1_id", "answer_2_id", "choice", "left_system_id", "preferred_system_id"
        )
    )
    assert stored == [
        (*answers, choice, left.pk, preferred.pk if preferred else None)
        for answers, choice, left, preferred in expected
    ]
    # Each pair's question key and systems are stored as the unordered pair.
    first = PairwisePreference.objects.filter(analyst=world["analyst"]).order_by("id").first()
    assert (first.system_1, first.system_2) == (world["one"], world["two"])
    assert first.question_key == first.answer_1.question_id


def test_pairwise_progress_next_pair_and_undo(client, world):
    client.force_login(world["analyst"])
    hx = {"HX-Request": "true"}
    first = client.get(_url(world)).text
    assert f"0 of {N}</strong> pairs" in first
    response = client.post(
        _url(world, "annotate:pairwise-save"), {"pair": _pair(first), "choice": "tie"}, headers=hx
    )
    assert "<html" not in response.text  # the #pairwise-screen partial
    assert f"1 of {N}</strong> pairs" in response.text
    assert "Saved: <strong>Tie</strong>" in response.text
    second_pair = _pair(response.text)
    assert second_pair != _pair(first)
    response = client.post(_url(world, "annotate:pairwise-undo"), headers=hx)
    assert f"0 of {N}</strong> pairs" in response.text
    assert "Undone: your “Tie” on this pair" in response.text
    assert _pair(response.text) == _pair(first)
    assert not PairwisePreference.objects.exists()
    response = client.post(_url(world, "annotate:pairwise-undo"), headers=hx)
    assert "There is no preference of yours to undo" in response.text


def test_pairwise_pages_carry_no_answer_id_and_a_token_is_one_analysts(client, world):
    """Blind (issue 34): the pair's form field once held "answer_1 id-answer_2 id", and an
    answer's id opens its page; the token now names neither answer, differs from analyst to
    analyst, and another analyst's token (or the bare ids) saves nothing."""
    project = world["project"]
    other = MembershipFactory(project=project, role="analyst").user
    hx = {"HX-Request": "true"}
    client.force_login(world["analyst"])
    first = client.get(_url(world)).text
    mine = _pair(first)
    saved = client.post(
        _url(world, "annotate:pairwise-save"), {"pair": mine, "choice": "tie"}, headers=hx
    ).text
    undone = client.post(_url(world, "annotate:pairwise-undo"), headers=hx).text
    undo_redirect = client.post(_url(world, "annotate:pairwise-undo"))["Location"]
    for page in (first, saved, undone):
        for token in re.findall(r'name="pair" value="([^"]+)"', page):
            assert re.fullmatch(r"[0-9a-f]{32}", token), token  # no "id-id" any more
    assert "?pair=" not in undo_redirect  # nothing left to undo: no pair named
    client.force_login(other)
    theirs = _pair(client.get(_url(world)).text)
    # the same first pair (one order for the project, the same question), another token
    assert (
        re.search(r'class="question-text"[^>]*>([^<]*)<', first).group(1)
        in client.get(_url(world), {"pair": theirs}).text
    )
    assert theirs != mine
    response = client.post(_url(world, "annotate:pairwise-save"), {"pair": mine, "choice": "left"})
    assert response.status_code == 422
    assert not PairwisePreference.objects.filter(analyst=other).exists()
    assert client.get(_url(world), {"pair": mine}).status_code == 404


def test_pairwise_marking_again_replaces_one_preference(client, world):
    client.force_login(world["analyst"])
    pair = _pair(client.get(_url(world)).text)
    save = _url(world, "annotate:pairwise-save")
    client.post(save, {"pair": pair, "choice": "left"})
    client.post(save, {"pair": pair, "choice": "right", "note": "on reflection"})
    (only,) = PairwisePreference.objects.all()
    assert (only.choice, only.note) == ("right", "on reflection")
    assert only.preferred_system_id != only.left_system_id
    page = client.get(_url(world), {"pair": pair}).text
    assert "Your preference: <strong>Right</strong>" in page


def test_pairwise_preference_constraints_hold_in_the_database(world):
    project, one, two = world["project"], world["one"], world["two"]
    a1 = Answer.objects.filter(system=one).order_by("id").first()
    a2 = Answer.objects.filter(system=two).order_by("id").first()
    base = {
        "project": project,
        "question_key": "q00",
        "system_1": one,
        "system_2": two,
        "answer_1": a1,
        "answer_2": a2,
        "left_system": one,
        "analyst": world["analyst"],
    }
    PairwisePreference.objects.create(**base, choice="left", preferred_system=one)
    bad = [
        {**base, "choice": "tie", "preferred_system": None},  # second preference on the pair
        {**base, "analyst": UserFactory(), "choice": "left", "preferred_system": two},
        {**base, "analyst": UserFactory(), "choice": "right", "preferred_system": one},
        {**base, "analyst": UserFactory(), "choice": "right", "preferred_system": None},
        {**base, "analyst": UserFactory(), "choice": "tie", "preferred_system": two},
        {**base, "analyst": UserFactory(), "system_1": two, "system_2": one, "choice": "tie"},
        {**base, "analyst": UserFactory(), "answer_2": a1, "choice": "tie"},
        {**base, "analyst": UserFactory(), "choice": "best", "preferred_system": None},
    ]
    for values in bad:
        with pytest.raises(IntegrityError), transaction.atomic():
            PairwisePreference.objects.create(**values)
    assert PairwisePreference.objects.count() == 1


def test_pairwise_save_refuses_a_pair_not_of_the_queue(client, world):
    analyst = world["analyst"]
    client.force_login(analyst)
    one_answer = Answer.objects.filter(system=world["one"]).order_by("id")
    two_answer = Answer.objects.filter(system=world["two"]).order_by("id")

    def token(a, b, user=analyst):
        return pair_token(analyst_id=user.pk, answer_1_id=a.pk, answer_2_id=b.pk)

    mismatched = token(one_answer[0], two_answer[1])  # two different questions
    swapped = token(two_answer[0], one_answer[0])
    colleagues = token(one_answer[0], two_answer[0], user=UserFactory())  # another analyst's
    ids = f"{one_answer[0].pk}-{two_answer[0].pk}"  # the answer ids the field once carried
    for sent in (mismatched, swapped, colleagues, ids, "12-x", ""):
        response = client.post(
            _url(world, "annotate:pairwise-save"), {"pair": sent, "choice": "left"}
        )
        assert response.status_code == 422
        assert "pair:" in response.text
    response = client.post(
        _url(world, "annotate:pairwise-save"),
        {"pair": token(one_answer[0], two_answer[0]), "choice": "maybe"},
    )
    assert response.status_code == 422
    assert "choice:" in response.text
    response = client.post(
        _url(world, "annotate:pairwise-save"), {"pair": mismatched, "choice": "maybe"}
    )
    assert response.status_code == 422
    assert "choice:" in response.text
    assert not PairwisePreference.objects.exists()


def test_pairwise_queue_of_systems_of_another_project_is_404(client, world):
    client.force_login(world["analyst"])
    elsewhere = System.objects.create(project=ProjectFactory(), name="x")
    url = reverse("annotate:pairwise", args=[world["project"].slug, world["one"].pk, elsewhere.pk])
    assert client.get(url).status_code == 404
    same = reverse(
        "annotate:pairwise", args=[world["project"].slug, world["one"].pk, world["one"].pk]
    )
    assert client.get(same).status_code == 404


def test_pairwise_index_lists_the_queue_with_progress_and_the_project_page_links_it(client, world):
    client.force_login(world["analyst"])
    slug = world["project"].slug
    page = client.get(reverse("annotate:pairwise-index", args=[slug])).text
    assert page.count('<th scope="row">Queue') == 1  # the lonely system shares no question
    assert f"<td>{N}</td>" in page
    assert _url(world) in page
    detail = client.get(reverse("annotate:project-detail", args=[slug])).text
    assert reverse("annotate:pairwise-index", args=[slug]) in detail


def test_pairwise_last_pair_then_empty_queue(client, world):
    client.force_login(world["analyst"])
    save = _url(world, "annotate:pairwise-save")
    for _ in range(N):
        client.post(save, {"pair": _pair(client.get(_url(world)).text), "choice": "tie"})
    page = client.get(_url(world)).text
    assert "No pair left to mark" in page
    assert f"{N} of {N}</strong> pairs" in page
    assert PairwisePreference.objects.count() == N


def test_demo_analyst_opens_the_pairwise_queue(client):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("demo_load", stdout=out)
    assert "http://127.0.0.1:8000/p/demo/pairwise/" in out.getvalue()
    a, b = System.objects.filter(project__slug="demo").order_by("id")
    client.force_login(UserFactory(username="ana"))
    index = client.get(reverse("annotate:pairwise-index", args=["demo"])).text
    queue = reverse("annotate:pairwise", args=["demo", a.pk, b.pk])
    assert queue in index
    page = client.get(queue).text
    assert "0 of 9</strong> pairs" in page
    for word in ("assistant", "2024-06", "2024-07", "bm25", "llama"):
        assert word not in page


def test_pairwise_queue_pairs_are_the_pairwise_judges_pairs(world):
    """The analysts and the judge must look at the same two answers of a question for their
    agreement to mean anything: a system answering a question twice (its first answer counts)
    and a question keyed by its text (no question_id) give the same pairs in both."""
    from annotate.selectors import pairwise_pairs
    from judges.pairwise_runner import shared_pairs

    project, one, two = world["project"], world["one"], world["two"]
    Answer.objects.create(
        project=project,
        external_id="dup",
        question="Question number 3?",
        question_id="q03",
        text="A later answer of the first system to q03.",
        system=one,
    )
    for system, word in ((one, "x"), (two, "y")):
        Answer.objects.create(
            project=project,
            external_id=f"textkey-{word}",
            question="Keyed by its text?",
            text=f"answer {word}",
            system=system,
        )
    ours = {
        p.key: (p.answer_1, p.answer_2)
        for p in pairwise_pairs(project=project, system_1=one, system_2=two)
    }
    judges = {
        key: (a.answer_id, b.answer_id)
        for key, (a, b) in shared_pairs(system_a_id=one.pk, system_b_id=two.pk).items()
    }
    assert ours == judges
    assert len(ours) == N + 1


def test_pairwise_sides_and_tokens_need_the_servers_key(settings):
    """An analyst who finds the two answers' ids elsewhere (an answer's page is open to them)
    cannot compute which side is whose, nor forge a token: both are keyed by the SECRET_KEY
    (the side was once a plain SHA-256 of the analyst's and the answers' ids)."""
    from annotate.pairwise import first_system_on_left

    triples = [(7, 100 + i, 200 + i) for i in range(32)]

    def drawn():
        sides = [
            first_system_on_left(analyst_id=u, answer_1_id=a, answer_2_id=b) for u, a, b in triples
        ]
        tokens = [pair_token(analyst_id=u, answer_1_id=a, answer_2_id=b) for u, a, b in triples]
        return sides, tokens

    settings.SECRET_KEY = "one key " * 8
    sides, tokens = drawn()
    assert drawn() == (sides, tokens)  # stable under one key
    settings.SECRET_KEY = "another key " * 8
    other_sides, other_tokens = drawn()
    assert other_sides != sides
    assert not set(other_tokens) & set(tokens)


def test_the_words_the_two_answers_differ_by_are_highlighted(client, world):
    """ "Answer text first 3." beside "Answer text second 3.": only "first"/"second" marked."""
    client.force_login(world["analyst"])
    html = client.get(_url(world)).text
    left, right = _sides(html)
    marked = {_highlighted(html, "left")[0].strip(), _highlighted(html, "right")[0].strip()}
    assert marked == {"first", "second"}
    assert len(_highlighted(html, "left")) == len(_highlighted(html, "right")) == 1
    assert "where the two answers differ (2 words)" in html
    assert 'data-testid="pairwise-identical"' not in html


def test_two_answers_word_for_word_the_same_are_said_to_be(client, world):
    Answer.objects.filter(project=world["project"]).update(text="The same answer, word for word.")
    client.force_login(world["analyst"])
    html = client.get(_url(world)).text
    assert "The two answers read word for word the same" in html
    assert "<mark" not in html.split('id="pairwise-screen"')[1].split("</form>")[0]
