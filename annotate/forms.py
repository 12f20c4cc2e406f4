from django import forms

from annotate.models import Project, Role


class ProjectCreateForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "slug", "description"]


class ProjectSettingsForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = [
            "name",
            "description",
            "guidelines",
            "analysts_per_claim",
            "double_labelled_share",
            "quote_required",
            "reveal_after_save",
            "count_changed_after_reveal",
            "count_outside_queue_labels",
            "queue_order",
        ]
        widgets = {"double_labelled_share": forms.NumberInput(attrs={"step": "0.05"})}

    def clean_double_labelled_share(self):
        share = self.cleaned_data["double_labelled_share"]
        if not 0 <= share <= 1:
            raise forms.ValidationError("Use a share between 0 and 1, e.g. 0.2 for 20%.")
        return share


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)
