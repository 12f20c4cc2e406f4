"""The judge backends, by name: each backend class declares what the rest of the product asks of
it and registers itself with `@register`; nothing else branches on a backend's name.

A backend class (ARCHITECTURE.md "Add a judge backend") subclasses `Declared` and sets:

- `name` (stored on the judge and the run, ≤ 10 characters), `label` (what the form shows);
- `needs_endpoint`: it calls an operator-declared endpoint (judges/endpoints.py), so a judge
  of it names one, takes its caps, and is refused a run while the endpoint is missing;
- `selectable`: offered when a lead adds a judge (the "imported" backend is not);
- `default_model`, `verify_prompt_needs_claim`, `can_pairwise`, `can_split`,
  `needs_question` (its passages carry the answer's question), `extra_verdict_columns` (the
  JudgeVerdict columns it fills from `VerifyResult.extra`), and `report_key` with
  `report_block` ("module:function" building the report's extra block for its judges, called
  as `build(data=, judge=, model=, prompt_version=)` and resolved by `metrics.services.report`,
  a floor above, so judges imports nothing of it; "" for none);
- `chunk_size(max_concurrency)` and `instrument(spec)` where the defaults do not fit;
- `from_spec(spec)`, building the backend a run calls.

Every module of this package is imported the first time the registry is read, so a new
backend is one new file here; a test registers its own by importing its module.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import ClassVar

from judges.backends.base import JudgeBackend, JudgeConfigError

_REGISTRY: dict[str, type[Declared]] = {}
_DISCOVERED = False


class Declared:
    """The declaration every backend class carries, with the defaults most backends want."""

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    position: ClassVar[int] = 100  # where forms list it
    needs_endpoint: ClassVar[bool] = False
    selectable: ClassVar[bool] = True
    default_model: ClassVar[str] = ""
    verify_prompt_needs_claim: ClassVar[bool] = False
    can_pairwise: ClassVar[bool] = False
    can_split: ClassVar[bool] = False
    needs_question: ClassVar[bool] = False
    extra_verdict_columns: ClassVar[tuple[str, ...]] = ()
    report_key: ClassVar[str] = ""
    report_block: ClassVar[str] = ""

    @classmethod
    def chunk_size(cls, max_concurrency: int) -> int:
        """Claims per chunk of a run: small for a paid endpoint (a killed worker loses at most
        one chunk of calls), bounded by 16 and 128."""
        return max(16, min(128, 4 * max_concurrency))

    @classmethod
    def instrument(cls, spec: dict) -> tuple[str, dict]:
        """The text whose hash is the run's prompt version, and the spec the run freezes
        (`spec` holds the judge's verify and decompose prompts; the default keeps both and
        the verify prompt is the instrument)."""
        frozen = dict(spec)
        return frozen.pop("verify_prompt"), frozen

    @classmethod
    def from_spec(cls, spec: dict) -> JudgeBackend:
        raise JudgeConfigError(f"judge backend {cls.name!r} cannot be run")


def register(cls: type[Declared]) -> type[Declared]:
    """Class decorator: add the backend under its `name` (a second class of that name is
    refused, so two files cannot quietly claim one backend)."""
    if not cls.name or len(cls.name) > 10:
        raise ValueError(f"a backend's name must be 1–10 characters, got {cls.name!r}")
    known = _REGISTRY.get(cls.name)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise ValueError(f"judge backend {cls.name!r} is declared twice ({known} and {cls})")
    _REGISTRY[cls.name] = cls
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    package = importlib.import_module("judges.backends")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"judges.backends.{module.name}")
    _DISCOVERED = True


def backends() -> dict[str, type[Declared]]:
    """Every registered backend by name, in registration order."""
    _discover()
    return dict(sorted(_REGISTRY.items(), key=lambda item: (item[1].position, item[0])))


def backend_kind(name: str) -> type[Declared]:
    """The backend class of that name; JudgeConfigError naming the choices when none is."""
    known = backends()
    try:
        return known[name]
    except KeyError:
        choices = ", ".join(sorted(known))
        raise JudgeConfigError(f"unknown judge backend {name!r}: use {choices}") from None


def backend_choices(*, selectable_only: bool = True) -> list[tuple[str, str]]:
    """(name, label) of the backends a lead may choose (all of them with `selectable_only`
    False: what a stored judge may hold)."""
    return [
        (name, cls.label)
        for name, cls in backends().items()
        if cls.selectable or not selectable_only
    ]


def backend_names(**flags: bool) -> tuple[str, ...]:
    """The names of the backends whose declaration has every given flag, e.g.
    `backend_names(needs_endpoint=True)`."""
    return tuple(
        name
        for name, cls in backends().items()
        if all(getattr(cls, flag) == value for flag, value in flags.items())
    )
