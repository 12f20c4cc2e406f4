"""The account page for personal API tokens: list, create (the token shown once), revoke."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from annotate.selectors import project_list_for_user
from api.tokens import TokenError, token_create, token_get_for_user, token_revoke, tokens_for_user


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What it is for, e.g. “nightly CI”.")
    read_only = forms.BooleanField(required=False, help_text="It can read, never change.")
    project = forms.ChoiceField(required=False, help_text="Limit it to one project.")
    expires_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=3650,
        help_text="Days until it expires; blank: never.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.projects = {p.slug: p for p in project_list_for_user(user=user)}
        self.fields["project"].choices = [("", "All my projects")] + [
            (slug, project.name) for slug, project in self.projects.items()
        ]


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request):
    form = TokenForm(request.POST or None, user=request.user)
    created = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                created = token_create(
                    user=request.user,
                    name=data["name"],
                    read_only=data["read_only"],
                    project=form.projects.get(data["project"]) if data["project"] else None,
                    expires_days=data["expires_days"],
                )
            except TokenError as error:
                form.add_error(None, str(error))
                status = 422
            else:
                form = TokenForm(user=request.user)
        else:
            status = 422
    response = render(
        request,
        "api/tokens.html",
        {"form": form, "created": created, "tokens": tokens_for_user(user=request.user)},
        status=status,
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke_view(request, token_id: int):
    token = token_get_for_user(user=request.user, token_id=token_id)
    if token is not None and token_revoke(token=token):
        messages.success(request, f"Token “{token.name}” is revoked.")
    return redirect("api-pages:tokens")
