from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from judges.backends.registry import backend_choices
from judges.services import judge_create


class Command(BaseCommand):
    help = (
        "Configure a judge for a project. An OpenAI-compatible judge names an endpoint the "
        "operator declared (FAITHAUDIT_LLM_ENDPOINTS); its URL and key come from there."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--backend", required=True, choices=[name for name, _ in backend_choices()]
        )
        parser.add_argument(
            "--bits-threshold",
            type=float,
            default=None,
            help="--backend bits: SUPPORTED above this many bits (default 0)",
        )
        parser.add_argument(
            "--bits-mode",
            choices=["echo", "prompt_logprobs"],
            default=None,
            help="--backend bits: ask for echo+logprobs (default) or vLLM's prompt_logprobs",
        )
        parser.add_argument(
            "--endpoint",
            default="",
            help="name of a declared LLM endpoint (for --backend openai or bits)",
        )
        parser.add_argument("--model", default="")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument(
            "--max-concurrency", type=int, default=None, help="default: the endpoint's cap"
        )
        parser.add_argument(
            "--timeout", type=float, default=None, help="seconds per call (default: the cap)"
        )
        parser.add_argument("--max-retries", type=int, default=None, help="default: the cap")
        parser.add_argument("--verify-prompt-file", help="a file holding the verify prompt")
        parser.add_argument(
            "--pairwise-prompt-file",
            help="a file holding the pairwise prompt ({question}, {answer_1}, {pile_1}, "
            "{answer_2}, {pile_2})",
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        verify_prompt = ""
        if opts["verify_prompt_file"]:
            with open(opts["verify_prompt_file"], encoding="utf-8") as handle:
                verify_prompt = handle.read()
        pairwise_prompt = None
        if opts["pairwise_prompt_file"]:
            with open(opts["pairwise_prompt_file"], encoding="utf-8") as handle:
                pairwise_prompt = handle.read()
        try:
            judge = judge_create(
                project=project,
                name=opts["name"],
                backend=opts["backend"],
                model=opts["model"],
                endpoint=opts["endpoint"],
                temperature=opts["temperature"],
                max_concurrency=opts["max_concurrency"],
                timeout_seconds=opts["timeout"],
                max_retries=opts["max_retries"],
                verify_prompt=verify_prompt,
                pairwise_prompt=pairwise_prompt,
                parameters={
                    key: opts[key]
                    for key in ("bits_threshold", "bits_mode")
                    if opts[key] is not None
                },
            )
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
                if hasattr(exc, "error_dict")
                else " ".join(exc.messages)
            ) from None
        self.stdout.write(
            f"judge {judge.name} (id {judge.pk}, {judge.backend}, prompt version "
            f"{judge.prompt_version}) created in {project.slug}"
        )
