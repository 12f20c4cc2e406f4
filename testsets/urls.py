"""testsets' URLs, composed from each view module's own list."""

from testsets.views import documents, generate, review, runs

app_name = "testsets"

urlpatterns = [
    *documents.urlpatterns,
    *generate.urlpatterns,
    *runs.urlpatterns,
    *review.urlpatterns,
]
