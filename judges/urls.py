from judges.views import urlpatterns  # noqa: F401

app_name = "judges"
