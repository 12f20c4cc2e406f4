"""Issue 19 item 4 in real Chromium: save-and-next shows the next claim at once, rendered ahead,
while the save is still on its way (its POST held back by Playwright here); a refused save shows
nothing ahead; a claim lost meanwhile gives way to the server's answer."""

import pytest

from annotate.models import Label, Reservation, Verdict
from annotate.services.labels import label_save
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

pytestmark = pytest.mark.browser

HOURS = "The central library opening hours: Monday to Friday 9–17, Saturday 10–14. Closed Sunday."
TEXTS = [
    "The library opens Monday to Friday.",
    "The library is open on Sunday.",
    "Late fees are 20 cents a day.",
]


def project_of_three():
    membership = MembershipFactory(user=UserFactory(username="ana"))
    project = membership.project
    answer = AnswerFactory(project=project, question="When is the library open?", text="…")
    PassageFactory(answer=answer, rank=1, title="Opening hours", text=HOURS)
    claims = [
        ClaimFactory(answer=answer, text=text, position=i, queue_key=10 + i)
        for i, text in enumerate(TEXTS)
    ]
    return project, membership, claims


def claim_text(page) -> str:
    return page.get_by_test_id("claim-text").inner_text()


def ready_ahead(page, claim):
    """Wait until the screen of `claim` holds the next one, rendered ahead."""
    page.wait_for_selector(f'#screen[data-claim-id="{claim.pk}"][data-following-ready]')


def hold_saves(page) -> list:
    """Every POST of a save is held until the test lets it go (`route.continue_()`)."""
    held = []
    page.route("**/label/*/save/", lambda route: held.append(route))
    return held


def wait_held(page, held: list, count: int = 1) -> None:
    """Until `count` save POSTs reach the route: Playwright's sync API dispatches a route only
    while the test waits on the page, so a POST sent just after the screen changed may not be
    in `held` yet when the next line runs."""
    for _ in range(600):
        if len(held) >= count:
            return
        page.wait_for_timeout(50)


def test_save_and_next_shows_the_next_claim_before_the_save_is_answered(browser_page, screenshot):
    project, membership, claims = project_of_three()
    page = browser_page(membership.user, width=1280, height=720)
    held = hold_saves(page)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    ready_ahead(page, claims[0])
    assert claim_text(page) == TEXTS[0]
    # The claim ahead is the analyst's: no colleague is handed it meanwhile.
    assert Reservation.objects.filter(user=membership.user, claim=claims[1]).exists()

    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[1]
    )
    # The save's POST is still held: the next claim is on the screen, the label not yet stored.
    wait_held(page, held)
    assert len(held) == 1
    # It names the claim shown ahead: the server answers with the confirmation alone.
    assert held[0].request.headers.get("x-screen-ahead") == str(claims[1].pk)
    assert not Label.objects.exists()
    assert (
        page.locator(".label-saving").inner_text().startswith(f"Saving your label for “{TEXTS[0]}”")
    )
    # The next claim's heading has focus, so a verdict key chooses and never types a quote.
    assert page.evaluate("document.activeElement.id") == "claim-heading"
    page.keyboard.press("1")
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()
    assert page.get_by_test_id("quote").input_value() == ""
    screenshot(page, "screens-prefetch-shown-while-saving.png", full_page=False)

    held[0].continue_()
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claims[0].pk}"]')
    label = Label.objects.get(annotator=membership.user)
    assert (label.claim_id, label.verdict) == (claims[0].pk, Verdict.NOT_IN_PILE)
    assert page.get_by_test_id("my-count").inner_text() == "1"
    # The server confirmed the claim shown: what the analyst began on it is still there.
    assert claim_text(page) == TEXTS[1]
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()
    assert page.locator(".label-saving").count() == 0

    # j/k still move within the answer once the save is answered.
    page.keyboard.press("k")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[0]
    )
    page.keyboard.press("j")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[1]
    )


def test_a_refused_save_keeps_its_claim_and_shows_nothing_ahead(browser_page):
    project, membership, claims = project_of_three()  # quotes required (the default)
    page = browser_page(membership.user, width=1280, height=720)
    held = hold_saves(page)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    ready_ahead(page, claims[0])

    page.keyboard.press("1")  # SUPPORTED without the quote it needs
    page.keyboard.press("Enter")
    wait_held(page, held)
    # Posted the usual way, and still held: the claim ahead is not shown meanwhile.
    assert claim_text(page) == TEXTS[0]
    assert page.locator(".last-saved").count() == 0
    held[0].continue_()
    error = page.locator(".label-error")
    error.wait_for()
    assert error.inner_text() == (
        "A SUPPORTED label needs a quote: select the sentence in the pile that decides it."
    )
    assert claim_text(page) == TEXTS[0]
    assert page.locator("input[name=verdict][value=SUPPORTED]").is_checked()
    assert not Label.objects.exists()


def test_a_claim_ahead_lost_meanwhile_gives_way_to_the_servers_answer(browser_page):
    project, membership, claims = project_of_three()
    bob = MembershipFactory(project=project, user=UserFactory(username="bob")).user
    page = browser_page(membership.user, width=1280, height=720)
    held = hold_saves(page)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    ready_ahead(page, claims[0])
    # Ana's hold on the claim ahead lapses and bob labels it.
    Reservation.objects.filter(user=membership.user, claim=claims[1]).delete()
    label_save(claim=claims[1], annotator=bob, verdict=Verdict.NOT_IN_PILE)

    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[1]
    )
    wait_held(page, held)
    held[0].continue_()
    # The server served the third claim: its answer replaces the one shown ahead.
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[2]
    )
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claims[0].pk}"]')
    assert Label.objects.filter(annotator=membership.user, claim=claims[0]).exists()
    assert page.evaluate("document.activeElement.id") == "claim-heading"


def test_a_save_asked_for_while_the_last_is_posted_goes_once_that_is_answered(browser_page):
    project, membership, claims = project_of_three()
    page = browser_page(membership.user, width=1280, height=720)
    held = hold_saves(page)
    page.goto(f"{page.base_url}/p/{project.slug}/label/")
    ready_ahead(page, claims[0])
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('[data-testid=claim-text]')?.innerText === t", arg=TEXTS[1]
    )
    page.keyboard.press("3")
    page.keyboard.press("Enter")  # the second claim's save, while the first's is still held
    page.wait_for_timeout(300)
    assert len(held) == 1  # it waits: one save at a time, in order
    assert claim_text(page) == TEXTS[1]

    held[0].continue_()
    wait_held(page, held, 2)  # the second save is sent once the first is answered
    assert len(held) == 2
    assert list(Label.objects.values_list("claim_id", flat=True)) == [claims[0].pk]
    held[1].continue_()
    page.wait_for_selector(f'.last-saved[data-saved-claim="{claims[1].pk}"]')
    assert claim_text(page) == TEXTS[2]
    assert set(Label.objects.values_list("claim_id", flat=True)) == {claims[0].pk, claims[1].pk}
    assert page.get_by_test_id("my-count").inner_text() == "2"
