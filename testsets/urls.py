"""testsets' URLs, composed from each view module's own list."""

from testsets.views import documents, generate

app_name = "testsets"

urlpatterns = [
    *documents.urlpatterns,
    *generate.urlpatterns,
]
