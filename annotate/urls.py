"""annotate's URLs, composed from each view module's own list (config/urls.py adds the
interchange's import and export pages to this `annotate` namespace)."""

from annotate.views import claims, comments, labelling, pairwise, projects, review, skips

app_name = "annotate"

urlpatterns = [
    *projects.urlpatterns,
    *labelling.urlpatterns,
    *claims.urlpatterns,
    *review.urlpatterns,
    *skips.urlpatterns,
    *pairwise.urlpatterns,
    *comments.urlpatterns,
]
