"""An answer's system as a file gives it: a name, or {"name", "version"?, ...metadata}.

    "system": "rag-v2"
    "system": {"name": "rag", "version": "2", "retriever": "bm25", "generator_model": "gpt-4o"}

Every key of the object other than `name` and `version` is the system's free metadata
(`metadata` itself, when given as an object, is merged in).
"""

from dataclasses import dataclass, field
from typing import Any

from interchange.importers.fields import FieldReader, join, shown

NAME_CHARS = 100
VERSION_CHARS = 100


@dataclass
class SystemIn:
    name: str
    version: str = ""
    metadata: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, self.version)


def system_parse(reader: FieldReader, raw: Any, path: str) -> SystemIn | None:
    """The system `raw` names, or None (with the reason noted) when it is malformed."""
    if isinstance(raw, str):
        name = raw.strip()
        if not name:
            reader.fail(path, "must not be empty")
            return None
        if len(name) > NAME_CHARS:
            reader.fail(path, f"is {len(name)} characters long; at most {NAME_CHARS} fit")
            return None
        return SystemIn(name=name) if reader.storable(name, path) else None
    if not isinstance(raw, dict):
        reader.fail(path, f"expected a system name or an object with a name, got {shown(raw)}")
        return None
    name = reader.get(raw, "name", path, "string", max_length=NAME_CHARS)
    if name is not None and not name.strip():
        reader.fail(join(path, "name"), "must not be empty")
        name = None
    version = reader.get(
        raw, "version", path, "id", required=False, default="", max_length=VERSION_CHARS
    )
    extra = raw.get("metadata")
    if extra is not None and not isinstance(extra, dict):
        reader.fail(join(path, "metadata"), f"expected an object, got {shown(extra)}")
        return None
    metadata = {
        key: value for key, value in raw.items() if key not in ("name", "version", "metadata")
    }
    metadata.update(extra or {})
    if name is None or version is None or not reader.storable(metadata, join(path, "metadata")):
        return None
    return SystemIn(name=name.strip(), version=str(version).strip(), metadata=metadata)


def system_from_option(text: str) -> SystemIn:
    """`--system NAME` or `NAME@VERSION` (the import command and the upload form); ValueError
    when empty or too long."""
    name, _, version = text.strip().partition("@")
    name, version = name.strip(), version.strip()
    if not name:
        raise ValueError("The system needs a name (NAME or NAME@VERSION).")
    if len(name) > NAME_CHARS or len(version) > VERSION_CHARS:
        raise ValueError(f"A system's name and version fit {NAME_CHARS} characters each.")
    return SystemIn(name=name, version=version)
