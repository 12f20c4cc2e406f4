from django.urls import path

from monitor import views

app_name = "monitor"

urlpatterns = [
    path("p/<slug:slug>/monitor/", views.streams, name="streams"),
]
