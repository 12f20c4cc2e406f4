from urllib.parse import urlencode

from django import forms

from annotate.limits import project_text_problems
from annotate.models import Project, RiskCategory, Role
from annotate.vocabulary import VERDICTS


class ProjectTextsLimited:
    """A project form's description and guidelines held to the operator's limits
    (`annotate.limits.project_text_problems`), each error on its field."""

    def clean(self):
        cleaned = super().clean()
        texts = {f: cleaned[f] for f in ("description", "guidelines") if cleaned.get(f)}
        for field, problem in project_text_problems(**texts).items():
            self.add_error(field, problem)
        return cleaned


class ProjectCreateForm(ProjectTextsLimited, forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "slug", "description"]


class ProjectSettingsForm(ProjectTextsLimited, forms.ModelForm):
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


class AnswerFilterForm(forms.Form):
    """The answers list's filters and sort (GET); the bulk actions post the same fields so
    they act on exactly the answers listed. An unknown value is an error naming its field.

    `blind` (an analyst's list): no filter by judge verdict, gold, analysts' disagreement or
    system, neither offered nor applied, so the list never tells an analyst what the judge,
    gold, colleagues or a system said of an answer (one blindness rule for every path)."""

    # The filters only a lead's list has (what an analyst must not learn before labelling).
    LEADS_ONLY = ("system", "gold", "disagreement", "verdict")

    HAS_GOLD = [("", "Any"), ("yes", "Every claim has gold"), ("no", "A claim lacks gold")]
    SORTS = [
        ("position", "Import order"),
        ("id", "Id"),
        ("question", "Question"),
        ("risk", "Risk category"),
        ("-claims", "Most claims first"),
        ("claims", "Fewest claims first"),
    ]
    VERDICTS = [("", "Any")] + [(v.value, v.value) for v in VERDICTS]

    q = forms.CharField(required=False, max_length=200, strip=True, label="Search")
    risk = forms.ChoiceField(required=False, label="Risk category")
    system = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="System")
    gold = forms.ChoiceField(required=False, choices=HAS_GOLD, label="Has gold")
    disagreement = forms.BooleanField(required=False, label="Analysts disagree")
    review = forms.BooleanField(required=False, label="Needs review")
    verdict = forms.ChoiceField(required=False, choices=VERDICTS, label="Judge verdict")
    sort = forms.ChoiceField(required=False, choices=SORTS, label="Sort")

    def __init__(self, *args, project, blind: bool = False, **kwargs):

        super().__init__(*args, **kwargs)
        self.fields["risk"].choices = [("", "Any"), *RiskCategory.choices]
        systems = list(project.systems.all())
        # The project page offers the pairwise queues from two systems on, to analysts too.
        self.systems_count = len(systems)
        if blind:
            for name in self.LEADS_ONLY:
                del self.fields[name]
        else:
            self.fields["system"].choices = [("", "Any")] + [(s.pk, str(s)) for s in systems]

    def filters(self) -> dict:
        """The cleaned filters for `answers_filtered` (call after is_valid())."""
        data = self.cleaned_data
        return {
            "search": data["q"],
            "risk_category": data["risk"],
            "system_id": data.get("system"),
            "has_gold": data.get("gold", ""),
            "disagreement": data.get("disagreement", False),
            "needs_review": data["review"],
            "judge_verdict": data.get("verdict", ""),
        }

    def described(self) -> str:
        """The filters in words, for a job started on the filtered set ("" for none): what a
        lead reads on the job's page, e.g. `search “refund”, risk category Health, analysts
        disagree` (call after is_valid())."""
        data = self.cleaned_data
        parts = []
        if data["q"]:
            parts.append(f"search “{data['q']}”")
        for name in ("risk", "system", "gold", "verdict"):
            if data.get(name) not in ("", None):
                field = self.fields[name]
                shown = dict(field.choices).get(data[name], data[name])
                if name == "gold":
                    parts.append(str(shown).lower())
                else:
                    parts.append(f"{str(field.label).lower()} {shown}")
        parts += [
            str(self.fields[name].label).lower()
            for name in ("disagreement", "review")
            if data.get(name)
        ]
        return ", ".join(parts)

    def query(self) -> str:
        """The filters and sort as a query string for links (pages, downloads)."""
        data = self.cleaned_data
        pairs = [(name, data.get(name)) for name in ("q", "risk", "system", "gold", "verdict")]
        pairs += [(name, "on") for name in ("disagreement", "review") if data.get(name)]
        if data["sort"] and data["sort"] != "position":
            pairs.append(("sort", data["sort"]))
        return urlencode([(k, v) for k, v in pairs if v not in ("", None)])
