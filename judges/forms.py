from django import forms

from judges.models import Backend, JudgeRun
from judges.prompts import DEFAULT_DECOMPOSE_PROMPT, DEFAULT_VERIFY_PROMPT


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=100)
    backend = forms.ChoiceField(
        choices=[(Backend.BASELINE, Backend.BASELINE.label), (Backend.OPENAI, Backend.OPENAI.label)]
    )
    model = forms.CharField(max_length=200, required=False, help_text="e.g. gpt-4o-mini, llama3.1")
    base_url = forms.URLField(
        max_length=500,
        required=False,
        assume_scheme="https",
        help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (blank: OpenAI).",
    )
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label="API key variable",
        help_text="The NAME of the environment variable holding the key where workers run "
        "(e.g. OPENAI_API_KEY). Never paste the key itself.",
    )
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    max_concurrency = forms.IntegerField(initial=8, min_value=1, max_value=256)
    timeout_seconds = forms.FloatField(initial=30.0, min_value=0.1, max_value=600)
    max_retries = forms.IntegerField(initial=5, min_value=0, max_value=20)
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


class CanaryListForm(forms.Form):
    lines = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One a line: <answer external id> | <statement true in the world but "
        "absent from that answer's pile>",
    )


class CanaryTransplantForm(forms.Form):
    n = forms.IntegerField(min_value=1, max_value=1000, initial=20, label="How many")
    seed = forms.IntegerField(min_value=0, initial=0)
