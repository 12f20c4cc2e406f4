from django.urls import path

from monitor import views

app_name = "monitor"

urlpatterns = [
    path("p/<slug:slug>/monitor/", views.streams, name="streams"),
    path("p/<slug:slug>/monitor/new/", views.stream_new, name="stream-new"),
    path("p/<slug:slug>/monitor/<int:stream_id>/edit/", views.stream_edit, name="stream-edit"),
    path(
        "p/<slug:slug>/monitor/<int:stream_id>/drift/clear/",
        views.drift_cleared,
        name="drift-clear",
    ),
    path("p/<slug:slug>/monitor/alerts/<int:alert_id>/", views.alert_detail, name="alert"),
]
