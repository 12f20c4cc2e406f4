"""annotate's URLs, composed from each view module's own list."""

from annotate.views import claims, io, labelling, projects, review

app_name = "annotate"

urlpatterns = [
    *projects.urlpatterns,
    *io.urlpatterns,
    *labelling.urlpatterns,
    *claims.urlpatterns,
    *review.urlpatterns,
]
