from django.urls import path

from api import views

app_name = "api-pages"

urlpatterns = [
    path("account/tokens/", views.tokens_page, name="tokens"),
    path("account/tokens/<int:token_id>/revoke/", views.token_revoke_view, name="token-revoke"),
]
