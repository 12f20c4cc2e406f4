"""factory_boy factories for the whole data model; tests build what they need from these."""

import factory
from django.contrib.auth import get_user_model
from django.db.models import F

from annotate.models import Answer, Claim, Gold, Label, Membership, Passage, Project, Role, Verdict
from judges.models import Backend, Judge, JudgeRun, JudgeVerdict

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password(PASSWORD)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.Sequence(lambda n: f"Project {n}")
    queue_seed = 7


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.ANALYST


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Answer

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"a{n}")
    position = factory.Sequence(lambda n: n)
    question = "How long do refunds take?"
    text = "Refunds take 14 days and are issued to the original card."

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        # As the import does: the project keeps its answer count for the project page.
        answer = super()._create(model_class, *args, **kwargs)
        Project.objects.filter(pk=answer.project_id).update(answers_count=F("answers_count") + 1)
        return answer


class PassageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Passage

    answer = factory.SubFactory(AnswerFactory)
    rank = factory.Sequence(lambda n: n + 1)
    source_id = factory.Sequence(lambda n: f"doc-{n}")
    title = "Refund policy"
    text = "Refunds are processed within 14 days. They are issued to the original card."


class ClaimFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Claim

    answer = factory.SubFactory(AnswerFactory)
    project = factory.SelfAttribute("answer.project")
    text = "Refunds take 14 days."
    position = factory.Sequence(lambda n: n)
    origin = "manual"
    queue_key = factory.Sequence(lambda n: (n * 2654435761) % 2**31)


class LabelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Label

    claim = factory.SubFactory(ClaimFactory)
    annotator = factory.SubFactory(UserFactory)
    verdict = Verdict.NOT_IN_PILE


class GoldFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Gold

    claim = factory.SubFactory(ClaimFactory)
    verdict = Verdict.SUPPORTED
    source = Gold.Source.UNANIMOUS


class JudgeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Judge

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"judge-{n}")
    backend = Backend.BASELINE
    model = "lexical-v1"


class JudgeRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeRun

    judge = factory.SubFactory(JudgeFactory)
    project = factory.SelfAttribute("judge.project")
    backend = factory.SelfAttribute("judge.backend")
    model = factory.SelfAttribute("judge.model")
    prompt_version = "v-test"
    status = JudgeRun.Status.DONE


class JudgeVerdictFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeVerdict

    run = factory.SubFactory(JudgeRunFactory)
    claim = factory.SubFactory(ClaimFactory)
    verdict = Verdict.SUPPORTED
    confidence = 0.9
