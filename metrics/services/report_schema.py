"""The report's JSON Schema, made from its sections' dataclasses (`report.SECTIONS`, laid
out as `report.LAYOUT`): the schema the API publishes as the report routes' response and the
tests validate every report against.

Each field's schema is pydantic's (`TypeAdapter`) for its type, with references resolved in
place (the OpenAPI document embeds it whole). The JSON's conventions are the serialiser's
(`sections.plain`): a spread section's fields are top-level keys, a field marked `omitted` is
optional, a `flattened` field's items stand in its place (a TypedDict's keys, or any key of a
Mapping's value type), and NaN is null (`json_safe`), so a float may be null.
"""

import copy
import functools
from dataclasses import fields, is_dataclass
from typing import Any

from pydantic import TypeAdapter

from judges.backends.registry import backends
from metrics.services.report import LAYOUT, SECTIONS
from metrics.services.sections import FLATTEN, OMIT, field_required


def _resolve(node: Any, defs: dict) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _resolve(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]), defs)
        return {key: _resolve(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve(item, defs) for item in node]
    return node


def _float_nullable(node: Any, wrap: bool = True) -> Any:
    """A number the JSON may carry as null (NaN, ±inf; not wrapped twice where the type
    already allows null); a pair (an interval) as an array of two of one item schema
    (`prefixItems` is not read by every OpenAPI tool)."""
    if isinstance(node, list):
        return [_float_nullable(item, wrap) for item in node]
    if not isinstance(node, dict):
        return node
    inner_wrap = {"type": "null"} not in node.get("anyOf", [])
    node = {
        key: _float_nullable(value, inner_wrap if key == "anyOf" else True)
        for key, value in node.items()
    }
    prefix = node.pop("prefixItems", None)
    if prefix is not None:
        node["items"] = prefix[0] if all(item == prefix[0] for item in prefix) else {}
    if wrap and node.get("type") == "number":
        return {"anyOf": [node, {"type": "null"}]}
    return node


def _type_schema(tp: Any) -> dict:
    if is_dataclass(tp):
        return _dataclass_schema(tp)
    schema = TypeAdapter(tp).json_schema(mode="serialization")
    defs = schema.pop("$defs", {})
    return _float_nullable(_resolve(schema, defs))


def _object(properties: dict, required: list[str], **extra) -> dict:
    return {"type": "object", "properties": properties, "required": required, **extra}


def _merge_fields(cls: type, properties: dict, required: list[str], extra: dict) -> None:
    """`cls`'s fields into an object schema's properties, as the serialiser writes them."""
    for item in fields(cls):
        schema = _type_schema(item.type)
        if item.metadata.get(FLATTEN):
            inner = schema.get("properties")
            if inner is None:  # a Mapping: any key, of its value type
                extra["additionalProperties"] = schema.get("additionalProperties", True)
            else:
                properties.update(inner)
                required.extend(schema.get("required", []))
            continue
        properties[item.name] = schema
        if field_required(item) and not item.metadata.get(OMIT):
            required.append(item.name)


def _dataclass_schema(cls: type) -> dict:
    properties: dict = {}
    required: list[str] = []
    extra: dict = {}
    _merge_fields(cls, properties, required, extra)
    return _object(properties, required, title=cls.__name__, **extra)


def _backend_keys() -> list[str]:
    return [kind.report_key for kind in backends().values() if kind.report_key]


@functools.cache
def report_json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a report as `report_build` writes it."""
    by_name = {section.name: section for section in SECTIONS}
    properties: dict = {}
    required: list[str] = []
    for name in LAYOUT:
        section = by_name[name]
        if section.spread:
            extra: dict = {}
            _merge_fields(section.type, properties, required, extra)
            if "additionalProperties" in extra:  # the backends' blocks, under their keys
                for key in _backend_keys():
                    properties[key] = {"type": "object"}
            continue
        properties[section.key] = _type_schema(section.type)
        if not section.optional:
            required.append(section.key)
    return _object(
        properties,
        required,
        title="Report",
        additionalProperties=False,
        description="A project's report: the JSON of `manage.py report --format json`.",
    )
