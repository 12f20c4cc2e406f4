"""Reads shared by views, tasks and commands.

Permission-checked fetches are named `<entity>_get_for_user`: they raise Http404 both when the
object does not exist and when the user may not see it, so another project's objects are never
confirmed to exist.
"""

from django.db.models import QuerySet
from django.http import Http404

from annotate.models import ROLE_RANK, Answer, Claim, Membership, Project, Role


def membership_get(*, user, project: Project) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(project=project, user=user).first()


def project_get_for_user(
    *, user, slug: str, role: str = Role.ANALYST
) -> tuple[Project, Membership]:
    """The project with this slug if `user` is a member with at least `role`, else Http404."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    membership = (
        Membership.objects.select_related("project").filter(project__slug=slug, user=user).first()
    )
    if membership is None or ROLE_RANK[Role(membership.role)] < ROLE_RANK[Role(role)]:
        raise Http404("No such project.")
    return membership.project, membership


def project_list_for_user(*, user) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user).order_by("name")


def answer_get_for_project(*, project: Project, answer_id: int) -> Answer:
    answer = Answer.objects.filter(project=project, pk=answer_id).first()
    if answer is None:
        raise Http404("No such answer.")
    return answer


def claim_get_for_project(*, project: Project, claim_id: int) -> Claim:
    claim = Claim.objects.select_related("answer").filter(project=project, pk=claim_id).first()
    if claim is None:
        raise Http404("No such claim.")
    return claim
