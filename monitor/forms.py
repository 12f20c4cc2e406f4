"""The stream's setup form: which answers (the project or one system), which judge version,
the sampling rate π, the target, the alert's reach (an operator-declared webhook, an email)."""

from __future__ import annotations

from django import forms
from django.db import models

from annotate.models import System
from judges.models import Judge

from .models import MonitoredStream
from .webhooks import webhooks_declared


class StreamForm(forms.ModelForm):
    class Meta:
        model = MonitoredStream
        fields = [
            "system",
            "judge",
            "sampling_rate",
            "target",
            "alpha",
            "horizon_days",
            "halfwidth_target",
            "webhook",
            "email",
            "active",
        ]
        labels = {
            "sampling_rate": "Sampling rate π",
            "target": "Faithfulness target",
            "alpha": "Error allowed (α)",
            "horizon_days": "Horizon (days)",
            "halfwidth_target": "Half-width target",
        }
        help_texts = {
            "sampling_rate": "The share of arriving claims drawn to the analysts' queue, between "
            "0 and 1. A change applies to claims arriving from now on; each claim keeps the π "
            "it was drawn with.",
            "target": "An alert is raised only once the confidence sequence excludes it.",
            "alpha": "The chance of any false alert over the whole horizon, however often "
            "the page is looked at.",
        }

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["system"].queryset = System.objects.filter(project=project)
        self.fields["system"].empty_label = "Every answer of the project"
        self.fields["judge"].queryset = Judge.objects.filter(project=project)
        self.fields["sampling_rate"].widget.attrs.update(min="0.0001", max="1", step="any")
        self.fields["target"].widget.attrs.update(min="0.01", max="0.99", step="any")
        declared = sorted(webhooks_declared())
        self.fields["webhook"] = forms.ChoiceField(
            required=False,
            choices=[("", "None")] + [(name, name) for name in declared],
            help_text="Webhooks the operator declared in FAITHAUDIT_MONITOR_WEBHOOKS; "
            "each alert is POSTed once as JSON."
            if declared
            else "None declared: the operator lists them in FAITHAUDIT_MONITOR_WEBHOOKS.",
        )

    def clean_sampling_rate(self):
        rate = self.cleaned_data["sampling_rate"]
        if not 0 < rate <= 1:
            raise forms.ValidationError(f"{rate:g} is not a share: use a number in (0, 1].")
        return rate

    def clean_target(self):
        target = self.cleaned_data["target"]
        if not 0 < target < 1:
            raise forms.ValidationError(f"{target:g} is not a rate strictly between 0 and 1.")
        return target

    def clean_alpha(self):
        alpha = self.cleaned_data["alpha"]
        if not 0 < alpha < 0.5:
            raise forms.ValidationError(f"{alpha:g}: use an error rate between 0 and 0.5.")
        return alpha

    def clean_halfwidth_target(self):
        half = self.cleaned_data["halfwidth_target"]
        if not 0 < half < 0.5:
            raise forms.ValidationError(f"{half:g}: use a half-width between 0 and 0.5.")
        return half

    def clean(self):
        """Two active streams never watch the same answers: a claim is sampled by one stream
        (its π is that stream's), so a second stream over it would see none of its claims."""
        data = super().clean()
        if not data.get("active", True):
            return data
        others = MonitoredStream.objects.filter(project=self.project, active=True)
        if self.instance.pk:
            others = others.exclude(pk=self.instance.pk)
        system = data.get("system")
        if system is not None:
            others = others.filter(models.Q(system__isnull=True) | models.Q(system=system))
        clash = others.select_related("system").first()
        if clash is not None:
            scope = f"system {clash.system}" if clash.system_id else "every answer of the project"
            raise forms.ValidationError(
                f"Stream {clash.pk} already watches {scope}: an answer is sampled by one active "
                "stream only. Pause that stream, or choose a system it does not cover."
            )
        return data
