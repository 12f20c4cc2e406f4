"""Projects and their members."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F
from django.http import Http404

from annotate.limits import project_text_problems
from annotate.models import Answer, Claim, Membership, Project, Role
from annotate.services.design import claim_design_key
from annotate.services.review import gold_recompute_changed_after_reveal


class MembershipError(ValueError):
    """A membership change that would leave the project in a bad state."""


def project_create_allowed(*, user) -> bool:
    """Whether `user` may create a project: FAITHAUDIT_PROJECT_CREATORS is "any" signed-in
    user, or "staff" only (the production default)."""
    if not user.is_authenticated or not user.is_active:
        return False
    return settings.FAITHAUDIT_PROJECT_CREATORS == "any" or user.is_staff


@transaction.atomic
def project_create(*, slug: str, name: str, owner, description: str = "") -> Project:
    """A new project with `owner` as its owner; PermissionDenied if they may not create one,
    ValidationError (by field) for a description over the operator's limit."""
    if not project_create_allowed(user=owner):
        raise PermissionDenied("Only staff may create projects here: ask an administrator.")
    if problems := project_text_problems(description=description):
        raise ValidationError(problems)
    project = Project.objects.create(slug=slug, name=name, description=description)
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    return project


def project_answers_recount(*, project_ids) -> None:
    """Set `Project.answers_count` from the answers there are, for answers written outside the
    import (the admin) or to repair the stored total the project page paginates by."""
    for project_id in set(project_ids) - {None}:
        Project.objects.filter(pk=project_id).update(
            answers_count=Answer.objects.filter(project_id=project_id).count()
        )


@transaction.atomic
def membership_set(*, project: Project, username: str, role: str) -> Membership | None:
    """Give the existing, active user `username` `role` in the project (adding them if need
    be).

    None, and nothing written, when there is no such user or the account is deactivated (it
    cannot sign in, so it cannot be added): the caller answers the same either way, with
    `member_set_notice`, so the members form and the API cannot be used to find out which
    usernames exist.
    """
    if role not in Role.values:
        raise MembershipError(f"Unknown role {role!r}.")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        return None
    membership, created = Membership.objects.select_for_update().get_or_create(
        project=project, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        _keep_an_owner(project=project, leaving=membership)
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def member_set_notice(*, username: str, role: str) -> str:
    """What the owner is told after `membership_set`, the same words whether or not the user
    exists and could be added (no username oracle)."""
    label = Role(role).label.lower()
    article = "an" if label[0] in "aeiou" else "a"
    return f"If a user called {username} exists, they are now {article} {label} of this project."


@transaction.atomic
def membership_remove(*, project: Project, membership_id: int) -> None:
    membership = (
        Membership.objects.select_for_update().filter(project=project, pk=membership_id).first()
    )
    if membership is None:  # another project's member, or none: not found, never a 500
        raise Http404("No such member.")
    _keep_an_owner(project=project, leaving=membership)
    membership.delete()


def _keep_an_owner(*, project: Project, leaving: Membership) -> None:
    if leaving.role != Role.OWNER:
        return
    others = Membership.objects.filter(project=project, role=Role.OWNER).exclude(pk=leaving.pk)
    if not others.exists():
        raise MembershipError("A project needs at least one owner.")


@transaction.atomic
def project_settings_update(*, project: Project, **fields) -> Project:
    allowed = {
        "name",
        "description",
        "guidelines",
        "analysts_per_claim",
        "double_labelled_share",
        "quote_required",
        "reveal_after_save",
        "count_changed_after_reveal",
        "count_outside_queue_labels",
        "queue_order",
    }
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"Not a project setting: {', '.join(sorted(unknown))}")
    texts = {f: fields[f] for f in ("description", "guidelines") if f in fields}
    if problems := project_text_problems(**texts):
        raise ValidationError(problems)
    # Read from the database: a ModelForm has already set the new value on `project`.
    counting_changed = "count_changed_after_reveal" in fields and fields[
        "count_changed_after_reveal"
    ] != Project.objects.values_list("count_changed_after_reveal", flat=True).get(pk=project.pk)
    stored_guidelines, stored_order = Project.objects.values_list("guidelines", "queue_order").get(
        pk=project.pk
    )
    guidelines_changed = "guidelines" in fields and fields["guidelines"] != stored_guidelines
    order_changed = "queue_order" in fields and fields["queue_order"] != stored_order
    if order_changed and project.queue_design == Project.QueueDesign.ACTIVE:
        # The active design's π were drawn for one unit (claims or answers): recompute them.
        raise ValidationError(
            {
                "queue_order": "The active design's probabilities were computed for the "
                "current order: switch the queue design to uniform first, change the order, "
                "then apply the active design again."
            }
        )
    for key, value in fields.items():
        setattr(project, key, value)
    update = list(fields)
    if guidelines_changed:
        # Labels record the version they were saved under (annotate.services.labels).
        project.guidelines_version = F("guidelines_version") + 1
        update.append("guidelines_version")
    project.full_clean(exclude=["guidelines_version"])
    project.save(update_fields=update)
    if guidelines_changed:
        project.refresh_from_db(fields=["guidelines_version"])
    if order_changed:
        claims_queue_rekey(project=project)
    if counting_changed:
        gold_recompute_changed_after_reveal(project=project)
    return project


def claims_queue_rekey(*, project: Project) -> int:
    """Give every claim of `project` the queue key of the project's `queue_order` and
    `queue_design` (after a setting changed; see `annotate.services.design.claim_design_key`);
    labels, reservations and which claims are double-labelled stay as they are. Returns the
    number of claims re-keyed."""
    changed = []
    rows = (
        Claim.objects.filter(project=project)
        .select_related("answer")
        .only("id", "position", "text", "queue_key", "inclusion_probability", "answer__external_id")
    )
    for claim in rows.iterator(chunk_size=2000):
        key = claim_design_key(
            project=project,
            claim=claim,
            external_id=claim.answer.external_id,
            design=project.queue_design,
        )
        if key != claim.queue_key:
            claim.queue_key = key
            changed.append(claim)
    Claim.objects.bulk_update(changed, ["queue_key"], batch_size=2000)
    return len(changed)
