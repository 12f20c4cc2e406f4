"""`manage.py api_token create|revoke|list --user NAME …`: personal API tokens at the shell.

`create` prints the new token alone on its last line (scripts read it with `tail -n 1`); it
is stored hashed and shown nowhere else, ever.
"""

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from api.tokens import TokenError, token_create, token_revoke, tokens_for_user, user_get_by_name


class Command(BaseCommand):
    help = "Create, revoke or list a user's personal API tokens."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["create", "revoke", "list"])
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--name", default="", help="what the token is for (create)")
        parser.add_argument("--read-only", action="store_true", help="it can never write")
        parser.add_argument("--project", help="limit the token to this project (slug)")
        parser.add_argument("--expires-days", type=int, help="days until it expires")
        parser.add_argument("--id", type=int, help="the token to revoke (see list)")
        parser.add_argument("--prefix", help="or its prefix, the part after fa_ (revoke)")

    def handle(self, *args, **opts):
        user = user_get_by_name(opts["user"])
        if user is None:
            raise CommandError(f"no user named {opts['user']!r}")
        getattr(self, f"_{opts['action']}")(user, opts)

    def _create(self, user, opts):
        project = None
        if opts["project"]:
            project = Project.objects.filter(slug=opts["project"]).first()
            if project is None:
                raise CommandError(f"no project with slug {opts['project']!r}")
        try:
            new = token_create(
                user=user,
                name=opts["name"] or "command line",
                read_only=opts["read_only"],
                project=project,
                expires_days=opts["expires_days"],
            )
        except TokenError as error:
            raise CommandError(str(error)) from None
        token = new.token
        self.stderr.write(
            f"token {token.pk} “{token.name}” for {user.username}"
            f"{' (read-only)' if token.read_only else ''}"
            f"{f', project {project.slug}' if project else ''}"
            f"{f', expires {token.expires_at:%Y-%m-%d}' if token.expires_at else ''}; "
            "shown once, on the next line:"
        )
        self.stdout.write(new.secret)

    def _revoke(self, user, opts):
        tokens = tokens_for_user(user=user)
        if opts["id"] is not None:
            tokens = tokens.filter(pk=opts["id"])
        elif opts["prefix"]:
            tokens = tokens.filter(prefix=opts["prefix"].removeprefix("fa_").split("_")[0])
        else:
            raise CommandError("say which token: --id N or --prefix P (see api_token list)")
        token = tokens.first()
        if token is None:
            raise CommandError(f"{user.username} has no such token")
        if token_revoke(token=token):
            self.stdout.write(f"token {token.pk} “{token.name}” revoked")
        else:
            self.stdout.write(f"token {token.pk} “{token.name}” was already revoked")

    def _list(self, user, opts):
        for token in tokens_for_user(user=user):
            self.stdout.write(
                "\t".join(
                    [
                        str(token.pk),
                        f"fa_{token.prefix}_…",
                        token.name,
                        "read-only" if token.read_only else "read-write",
                        token.project.slug if token.project_id else "all projects",
                        token.state,
                        f"last used {token.last_used_at:%Y-%m-%d %H:%M}"
                        if token.last_used_at
                        else "never used",
                    ]
                )
            )
