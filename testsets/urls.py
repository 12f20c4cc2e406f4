"""testsets' URLs, composed from each view module's own list."""

app_name = "testsets"

urlpatterns: list = []
