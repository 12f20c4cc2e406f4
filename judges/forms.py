from django import forms

from judges.backends.registry import backend_choices
from judges.endpoints import HOW_TO_DECLARE, endpoints_declared
from judges.models import Judge, JudgeRun
from judges.prompts import (
    DEFAULT_DECOMPOSE_PROMPT,
    DEFAULT_PAIRWISE_PROMPT,
    DEFAULT_VERIFY_PROMPT,
    pairwise_prompt_problem,
)
from judges.selectors import split_judges_for_project


def endpoint_help(*, with_urls: bool = False) -> str:
    """What the endpoint field says: the declared endpoints with their caps (and base URLs,
    `with_urls`: for a project's owners), or how an operator declares one."""
    declared = endpoints_declared()
    if not declared:
        return "None declared yet: only the offline baseline can judge. " + HOW_TO_DECLARE
    caps = "; ".join(
        f"{e.describe(with_url=with_urls)}: at most {e.timeout_seconds:g} s, {e.max_retries} retries, "
        f"{e.max_concurrency} at a time"
        for e in declared.values()
    )
    return f"The LLM endpoints the operator declared ({caps}). For the baseline leave it blank."


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=100)
    backend = forms.ChoiceField(
        choices=backend_choices  # every registered backend a lead may choose
    )
    model = forms.CharField(max_length=200, required=False, help_text="e.g. gpt-4o-mini, llama3.1")
    # Checked by the service against the operator's declaration, whose message names the
    # choices; a judge has no field for a URL or a key variable.
    endpoint = forms.CharField(max_length=100, required=False, widget=forms.Select)
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    max_concurrency = forms.IntegerField(
        required=False, min_value=1, max_value=256, help_text="Blank: the endpoint's cap."
    )
    timeout_seconds = forms.FloatField(
        required=False,
        min_value=0.1,
        max_value=600,
        label="Timeout (seconds)",
        help_text="Per call. Blank: the endpoint's cap; more than the cap is refused.",
    )
    max_retries = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=20,
        help_text="Blank: the endpoint's cap; more than the cap is refused.",
    )
    verify_prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 9}),
        required=False,
        initial=DEFAULT_VERIFY_PROMPT,
        help_text="Placeholders {context} and {claim}. Its hash is the prompt version.",
    )
    decompose_prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        initial=DEFAULT_DECOMPOSE_PROMPT,
        help_text="Placeholder {answer}.",
    )
    pairwise_prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 9, "placeholder": DEFAULT_PAIRWISE_PROMPT}),
        required=False,
        initial=DEFAULT_PAIRWISE_PROMPT,
        help_text="For pairwise judging (two systems' answers, both orders). Placeholders "
        "{question}, {answer_1}, {pile_1}, {answer_2}, {pile_2}, all required. Blank: the "
        "default. Its hash is the pairwise prompt version.",
    )

    def clean_pairwise_prompt(self) -> str:
        text = (self.cleaned_data.get("pairwise_prompt") or "").strip()
        problem = pairwise_prompt_problem(text) if text else ""
        if problem:
            raise forms.ValidationError(problem)
        return text

    def __init__(self, *args, show_urls: bool = False, **kwargs):
        """`show_urls`: name the endpoints' base URLs (for the project's owners only)."""
        super().__init__(*args, **kwargs)
        declared = endpoints_declared()
        field = self.fields["endpoint"]
        field.widget.attrs.pop("maxlength", None)  # a select, not a text box
        field.widget.choices = [("", "— none (baseline) —")] + [
            (name, endpoint.describe(with_url=show_urls))
            for name, endpoint in sorted(declared.items())
        ]
        current = self.initial.get("endpoint") or (self.data.get("endpoint") if self.data else "")
        if current and current not in declared:  # keep an old, undeclared choice visible
            field.widget.choices.append((current, f"{current} (not declared)"))
        field.help_text = endpoint_help(with_urls=show_urls)


class RunStartForm(forms.Form):
    kind = forms.ChoiceField(choices=JudgeRun.Kind.choices, initial=JudgeRun.Kind.VERIFY)
    scope = forms.ChoiceField(
        choices=[
            ("all", "All claims"),
            ("unjudged", "Claims this judge has not judged"),
            ("gold", "Claims with gold"),
        ],
        initial="all",
    )


class RunBulkForm(forms.Form):
    """A verify run over the answers list's filtered set: which judge, which of their claims."""

    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    scope = RunStartForm.base_fields["scope"]

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = Judge.objects.filter(project=project).order_by("name")
        self.fields["judge"].error_messages["invalid_choice"] = "Choose a judge of this project."
        self.fields["judge"].error_messages["required"] = "Choose the judge to run."


class CanaryListForm(forms.Form):
    lines = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One a line: <answer external id> | <statement true in the world but "
        "absent from that answer's pile>",
    )


class CanaryTransplantForm(forms.Form):
    n = forms.IntegerField(min_value=1, max_value=1000, initial=20, label="How many")
    seed = forms.IntegerField(min_value=0, initial=0)


class SplitStartForm(forms.Form):
    """Split by LLM: one answer (from its claims page), or every answer of the project that
    has no claims yet (all of them with `force`)."""

    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    answer = forms.IntegerField(required=False, widget=forms.HiddenInput)
    force = forms.BooleanField(required=False, label="Split again answers that have claims")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = split_judges_for_project(project=project)
        self.fields["judge"].error_messages["invalid_choice"] = (
            "Choose an OpenAI-compatible judge of this project: its decompose prompt splits."
        )


class SplitBulkForm(SplitStartForm):
    """Split the answers list's filtered set: by rule (no judge chosen, the default: offline
    and deterministic), or by LLM through the chosen judge's decompose prompt."""

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, project=project, **kwargs)
        del self.fields["answer"]
        self.fields["judge"].required = False
        self.fields["judge"].empty_label = "By rule (offline, deterministic)"


class GoldSplitForm(forms.Form):
    heldout_share = forms.FloatField(
        min_value=0.05,
        max_value=0.95,
        initial=0.5,
        label="Held-out share of answers",
        help_text="Split once: the held-out share decides between versions and feeds the "
        "headline of a tuned judge; never shown while improving one.",
    )
    seed = forms.IntegerField(required=False, min_value=0, help_text="Blank: drawn at random.")


class JudgeVersionForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="Blank: “<judge> vN”.")
    model = forms.CharField(max_length=200, required=False, help_text="Blank: the same model.")
    verify_prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        required=False,
        help_text="Blank: the same prompt (the examples are added above it).",
    )
    few_shot = forms.TypedMultipleChoiceField(
        coerce=int, required=False, choices=(), label="Few-shot examples (development gold)"
    )

    def __init__(self, *args, claim_ids=(), **kwargs):
        super().__init__(*args, **kwargs)
        # Any id may be posted: the service refuses one that is not development gold, by name.
        self.fields["few_shot"].choices = [(c, c) for c in claim_ids]
        self.fields["few_shot"].valid_value = lambda value: str(value).isdigit()
