"""The answers and judge a metrics page reads, from its query parameters: the `judge`
parameter (an id, "none", or empty for the default) and the `system` parameter (`Scope`).
Shared by the metrics pages (metrics/views/); a plain module so the pages need not import
one another."""

from django.http import Http404

from metrics import selectors

DEFAULT_ALPHA = 0.10  # metrics.services.DEFAULT_ALPHA

NO_JUDGE = "none"
ALL_SYSTEMS = "all"


def judge_from(project, value: str | None):
    """The judge named by the `judge` parameter: an id, "none" for none, empty for the default."""
    if value == NO_JUDGE:
        return None
    if value:
        return selectors.judge_get_for_project(project=project, judge_id=value)
    return selectors.judge_default_for_project(project=project)


def judge_param(judge) -> str:
    return str(judge.pk) if judge is not None else NO_JUDGE


class Scope:
    """The answers a report covers, from the `system` parameter: a system's id, "all" (every
    system's answers pooled), or empty for the default: every answer of a project with one
    system or none; with two or more, all systems pooled on the web pages (`pooled_default`,
    issue 32: a lead sees every system first, each one's headline beside it) and the first
    system for the API and the CLI (whose unscoped snapshots have always been the first
    system's)."""

    def __init__(self, project, value: str | None, *, pooled_default: bool = False):
        self.systems = list(selectors.systems_for_project(project=project))
        self.system = None
        self.all_systems = False
        value = (value or "").strip()
        several = len(self.systems) >= 2
        if several and (value == ALL_SYSTEMS or (not value and pooled_default)):
            self.all_systems = True
        elif value and several:
            by_id = {str(system.pk): system for system in self.systems}
            if value not in by_id:
                raise Http404("No such system.")
            self.system = by_id[value]
        elif value and value != ALL_SYSTEMS:
            raise Http404("No such system.")
        elif several:
            self.system = self.systems[0]
        if pooled_default:
            self.default = not several or self.all_systems
        else:
            self.default = not self.all_systems and (not several or self.system == self.systems[0])

    @property
    def several(self) -> bool:
        return len(self.systems) >= 2

    @property
    def param(self) -> str:
        if self.all_systems:
            return ALL_SYSTEMS
        return str(self.system.pk) if self.system is not None and self.several else ""

    @property
    def query(self) -> str:
        """The parameter to append to a link ("&system=…"; "" for the default)."""
        return f"&system={self.param}" if self.param and not self.default else ""

    def selectors_kwargs(self) -> dict:
        """The snapshot selectors' scope. Snapshots stored without a scope are the first
        system's (or every answer's, with one system), never all systems pooled."""
        unscoped = not self.all_systems and (not self.several or self.system == self.systems[0])
        return {"system": self.system, "all_systems": self.all_systems, "default": unscoped}

    @classmethod
    def of_snapshot(cls, project, snapshot) -> "Scope":
        if snapshot.all_systems:
            return cls(project, ALL_SYSTEMS)
        return cls(project, str(snapshot.system_id) if snapshot.system_id else "")
