"""The report as typed sections: each a builder with declared inputs (`needs`) returning a
frozen dataclass, built in a declared order and serialised once.

A `Section` names its builder and the names of what it takes: the report's inputs (`data`,
`project`, `judge`, `progress`, …) or the typed results of sections declared before it. The
assembler (`sections_build`) calls each builder with exactly those, keyword by keyword — a
builder never sees the report's dictionary nor a section it did not declare. A section with
`key=None` is internal (what travels between sections, never in the report); `spread` puts
its result's fields at the report's top level instead of under `key`.

`sections_serialise` then lays the results out in the report's own order (`layout`, which may
differ from the build order: the method strings are built after the figures they describe but
shown before the judge) and makes them JSON-safe once.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any

from metrics.services.common import json_safe

OMIT = "omit_when_none"
FLATTEN = "flatten"


def omitted(default: Any = None) -> Any:
    """A dataclass field left out of the JSON when None (a key some reports lack)."""
    return field(default=default, metadata={OMIT: True})


def flattened() -> Any:
    """A Mapping field whose items are written in its place (keys a registry decides)."""
    return field(default_factory=dict, metadata={FLATTEN: True})


@dataclass(frozen=True)
class Section:
    """One piece of the report: `name` (what later sections' `needs` call it), its builder,
    the names it needs, and where it goes in the JSON (`key`, None for an internal one;
    `spread`: its fields at top level). `stage`: (fraction, words) announced before it is
    built. `optional`: a None result leaves its key out."""

    name: str
    build: Callable[..., Any]
    needs: tuple[str, ...] = ()
    key: str | None = None
    spread: bool = False
    optional: bool = False
    stage: tuple[float, str] | None = None
    type: Any = None


class SectionOrderError(ValueError):
    """A section needs something neither an input nor built before it."""


def sections_check(sections: Sequence[Section], inputs: Sequence[str]) -> None:
    """Every section's needs are inputs or earlier sections; names are unique."""
    known = set(inputs)
    for section in sections:
        missing = [need for need in section.needs if need not in known]
        if missing:
            raise SectionOrderError(
                f"section {section.name!r} needs {', '.join(missing)}, "
                "which is neither an input nor a section declared before it"
            )
        if section.name in known:
            raise SectionOrderError(f"section {section.name!r} is declared twice")
        known.add(section.name)


def sections_build(sections: Sequence[Section], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Each section's typed result by name, built in the declared order, each builder called
    with exactly its needs."""
    sections_check(sections, list(inputs))
    progress = inputs.get("progress")
    results: dict[str, Any] = {}
    for section in sections:
        if section.stage is not None and progress is not None:
            progress(*section.stage)
        available = {**inputs, **results}
        results[section.name] = section.build(**{need: available[need] for need in section.needs})
    return results


def plain(value: Any) -> Any:
    """A typed result as plain dicts and lists, in its fields' order: None fields marked
    `omitted` left out, `flattened` mappings written in place. Other values as they are
    (`json_safe` makes them JSON afterwards)."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for item in fields(value):
            inner = getattr(value, item.name)
            if item.metadata.get(FLATTEN):
                out.update({key: plain(part) for key, part in inner.items()})
            elif inner is None and item.metadata.get(OMIT):
                continue
            else:
                out[item.name] = plain(inner)
        return out
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def sections_serialise(
    sections: Sequence[Section], layout: Sequence[str], results: Mapping[str, Any]
) -> dict:
    """The report's JSON-safe dict: the sections named in `layout`, in that order."""
    by_name = {section.name: section for section in sections}
    out: dict[str, Any] = {}
    for name in layout:
        section, result = by_name[name], results[name]
        if section.spread:
            out.update(plain(result))
        elif result is not None or not section.optional:
            out[section.key or name] = plain(result)
    return json_safe(out)


def field_names(cls: type) -> list[str]:
    """A section type's fields in order (for the schema)."""
    return [item.name for item in fields(cls)]


def field_required(item) -> bool:
    return item.default is MISSING and item.default_factory is MISSING
