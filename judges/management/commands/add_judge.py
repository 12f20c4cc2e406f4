from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from judges.models import Backend
from judges.services import judge_create


class Command(BaseCommand):
    help = "Configure a judge for a project (the API key is read from --api-key-env at run time)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--backend", required=True, choices=[Backend.OPENAI, Backend.BASELINE])
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, .../v1")
        parser.add_argument("--model", default="")
        parser.add_argument(
            "--api-key-env", default="", help="NAME of the environment variable holding the key"
        )
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-concurrency", type=int, default=8)
        parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call")
        parser.add_argument("--max-retries", type=int, default=5)
        parser.add_argument("--verify-prompt-file", help="a file holding the verify prompt")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        verify_prompt = ""
        if opts["verify_prompt_file"]:
            with open(opts["verify_prompt_file"], encoding="utf-8") as handle:
                verify_prompt = handle.read()
        try:
            judge = judge_create(
                project=project,
                name=opts["name"],
                backend=opts["backend"],
                model=opts["model"],
                base_url=opts["base_url"],
                api_key_env=opts["api_key_env"],
                temperature=opts["temperature"],
                max_concurrency=opts["max_concurrency"],
                timeout_seconds=opts["timeout"],
                max_retries=opts["max_retries"],
                verify_prompt=verify_prompt,
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
