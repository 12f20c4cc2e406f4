"""The active-audit panel on pages outside the dashboard (the project page): the latest report
of the project's default judge (else the gold-only report) over the dashboard's default answers
(all systems pooled when there are two or more), only its `active_audit` block read from the
snapshot."""

from django import template

from metrics import selectors
from metrics.scope import Scope

register = template.Library()


@register.inclusion_tag("metrics/_active_audit_panel.html", takes_context=True)
def active_audit_panel(context, project):
    judge = selectors.judge_default_for_project(project=project)
    scope = Scope(project, "", pooled_default=True).selectors_kwargs()
    block = selectors.snapshot_active_audit(project=project, judge=judge, **scope)
    if block is None and judge is not None:  # only a gold-only report computed so far
        judge = None
        block = selectors.snapshot_active_audit(project=project, judge=None, **scope)
    return {
        "report": {"active_audit": block} if block else None,
        "project": project,
        "membership": context.get("membership"),
        "judge_param": str(judge.pk) if judge is not None else "none",
        "csrf_token": context.get("csrf_token"),
    }
