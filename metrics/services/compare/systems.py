"""The systems a comparison names: a label for each, and the lookup of "NAME@VERSION"."""

from __future__ import annotations

from annotate.models import Project, System


class SystemNotFound(LookupError):
    """A system reference that names no system (or several) of the project; says which exist."""


def system_label(system: System) -> str:
    return f"{system.name}@{system.version}" if system.version else system.name


def system_resolve(*, project: Project, ref: str) -> System:
    """The project's system named `ref`: "NAME@VERSION", or a NAME only one version has."""
    name, _, version = str(ref).strip().partition("@")
    systems = System.objects.filter(project=project, name=name.strip())
    if version:
        systems = systems.filter(version=version.strip())
    found = list(systems[:2])
    if len(found) == 1:
        return found[0]
    known = ", ".join(system_label(s) for s in System.objects.filter(project=project)) or "none"
    if found:
        raise SystemNotFound(
            f"{ref!r} names several versions of {name!r}: write NAME@VERSION "
            f"(systems of this project: {known})."
        )
    raise SystemNotFound(f"No system {ref!r} in this project (systems: {known}).")
