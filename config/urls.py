from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import include, path, reverse_lazy
from django.views.decorators.http import require_http_methods

from annotate import urls as annotate_urls
from api.routes import api as json_api
from config.auth import OldPasswordLockoutView
from interchange import urls as interchange_urls


class LoginView(auth_views.LoginView):
    """Django's login; the page offers a reset link only where mail is configured."""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["password_reset_by_email"] = settings.PASSWORD_RESET_BY_EMAIL
        return context


@require_http_methods(["GET", "POST", "HEAD"])
def password_reset(request):
    """Password reset by email where mail is configured (PASSWORD_RESET_BY_EMAIL); else a page
    saying to ask an administrator, and nothing is sent."""
    if not settings.PASSWORD_RESET_BY_EMAIL:
        return render(request, "registration/password_reset_unavailable.html")
    return auth_views.PasswordResetView.as_view()(request)


@require_http_methods(["GET", "HEAD"])
def favicon(request):
    return redirect(static("favicon.svg"))


auth_urls = [
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The old password counts towards the sign-in lockout (config/auth.py).
    path("password/change/", OldPasswordLockoutView.as_view(), name="password_change"),
    path(
        "password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("password/reset/", password_reset, name="password_reset"),
    path(
        "password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            success_url=reverse_lazy("password_reset_complete")
        ),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says.
    path("favicon.ico", favicon, name="favicon"),
    *auth_urls,
    # The import and export pages (interchange) keep the `annotate:` names links always used.
    path("", include(([*annotate_urls.urlpatterns, *interchange_urls.urlpatterns], "annotate"))),
    path("", include("judges.urls")),
    path("", include("metrics.urls")),
    path("", include("monitor.urls")),
    path("", include("testsets.urls")),
    path("", include("api.urls")),
    path("api/v1/", json_api.urls),
]
