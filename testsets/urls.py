"""testsets' URLs, composed from each view module's own list."""

from testsets.views import review, runs

app_name = "testsets"

urlpatterns: list = [
    *runs.urlpatterns,
    *review.urlpatterns,
]
