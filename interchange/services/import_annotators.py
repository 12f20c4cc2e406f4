"""Who an imported label or gold is attributed to: a file's annotator name mapped to a member
(the import form's mapping, checked here), else the project's imported annotator of that name
(made on first sight). Never looks at which accounts exist."""

from annotate.models import ImportedAnnotator, Membership, Project, Role
from interchange.importers.issues import ImportFailed, ImportIssue


class AnnotatorMapError(ImportFailed):
    """A mapping of annotator names to members that cannot be applied; the message says why
    (an ImportFailed, so a job records it as the import's problem)."""

    def __init__(self, message: str):
        super().__init__([ImportIssue("the annotator mapping", "", message)])
        self.message = message

    def __str__(self) -> str:
        return self.message


def annotator_map_parse(text: str) -> dict[str, str]:
    """The import form's mapping, one `name = username` per line (blank lines ignored)."""
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, equals, username = (part.strip() for part in line.partition("="))
        if not equals or not name or not username:
            raise AnnotatorMapError(
                f"Line {number} of the mapping: write it as name = username, got {line.strip()!r}."
            )
        if name in mapping:
            raise AnnotatorMapError(f"Line {number} of the mapping: {name!r} is mapped twice.")
        mapping[name] = username
    return mapping


def annotator_map_check(*, project: Project, annotator_map: dict[str, str], user=None) -> dict:
    """name → user id of the member each name is mapped to; AnnotatorMapError unless every
    username is a member of `project` (of any role) and `user`, when given, is its owner.

    The message for a username that is no member is the same whether or not such an account
    exists, so the form cannot be used to find out which usernames there are.
    """
    if not annotator_map:
        return {}
    if user is not None:
        role = (
            Membership.objects.filter(project=project, user=user)
            .values_list("role", flat=True)
            .first()
        )
        if role != Role.OWNER:
            raise AnnotatorMapError(
                "Only an owner of this project can map annotator names to members; "
                "leave the mapping empty to import the names as imported annotators."
            )
    members = dict(
        Membership.objects.filter(
            project=project, user__username__in=set(annotator_map.values())
        ).values_list("user__username", "user_id")
    )
    for name, username in annotator_map.items():
        if username not in members:
            raise AnnotatorMapError(
                f"{name!r} → {username!r}: {username!r} is not a member of this project. "
                "Add them on the project's settings page first, or leave the name unmapped "
                f"(its labels are then kept as “{name} (imported)”). Nothing was imported."
            )
    return {name: members[username] for name, username in annotator_map.items()}


class Annotators:
    """The import's annotator names: `mapped` (name → member's user id) from the mapping,
    the others' imported annotators as their labels come in."""

    def __init__(self, *, project: Project, mapped: dict[str, int]):
        self.project = project
        self.mapped = mapped  # name -> member's user id
        self.imported_ids: dict[str, int] = {}  # name -> ImportedAnnotator id
        self.names_seen: set[str] = set()

    def add(self, names: set[str]) -> None:
        """Give every name not mapped to a member its imported annotator in the project
        (the existing one, else a new one). Never looks at accounts."""
        self.names_seen |= names
        missing = names - self.mapped.keys() - self.imported_ids.keys()
        if not missing:
            return
        found = dict(
            ImportedAnnotator.objects.filter(project=self.project, name__in=missing).values_list(
                "name", "id"
            )
        )
        created = ImportedAnnotator.objects.bulk_create(
            [
                ImportedAnnotator(project=self.project, name=name)
                for name in sorted(missing - found.keys())
            ]
        )
        if any(row.pk is None for row in created):  # backends without RETURNING
            found = dict(
                ImportedAnnotator.objects.filter(
                    project=self.project, name__in=missing
                ).values_list("name", "id")
            )
        else:
            found.update({row.name: row.pk for row in created})
        self.imported_ids.update(found)

    def who(self, name: str) -> tuple[int | None, int | None]:
        """(user id, imported annotator id) a name's label or gold is attributed to."""
        if name in self.mapped:
            return self.mapped[name], None
        return None, self.imported_ids[name]

    @property
    def names_mapped(self) -> int:
        """How many of the names seen are mapped to members."""
        return len(self.names_seen & self.mapped.keys())
