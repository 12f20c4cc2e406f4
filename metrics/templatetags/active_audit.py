"""The active-audit panel on pages outside the dashboard (the project page): the latest report
of the project's default judge, only its `active_audit` block read from the snapshot."""

from django import template

from metrics import selectors

register = template.Library()


@register.inclusion_tag("metrics/_active_audit_panel.html", takes_context=True)
def active_audit_panel(context, project):
    judge = selectors.judge_default_for_project(project=project)
    block = selectors.snapshot_active_audit(project=project, judge=judge)
    return {
        "report": {"active_audit": block} if block else None,
        "project": project,
        "membership": context.get("membership"),
        "judge_param": str(judge.pk) if judge is not None else "none",
        "csrf_token": context.get("csrf_token"),
    }
