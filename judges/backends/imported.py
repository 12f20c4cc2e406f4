"""Verdicts brought in by a file (interchange's importers): a judge of this backend is never
run; it holds what another tool decided, audited like any other."""

from judges.backends.registry import Declared, register


@register
class ImportedBackend(Declared):
    name = "imported"
    label = "Imported verdicts"
    position = 3
    selectable = False
