"""annotate's URLs, composed from each view module's own list."""

from annotate.views import io, labelling, projects

app_name = "annotate"

urlpatterns = [*projects.urlpatterns, *io.urlpatterns, *labelling.urlpatterns]
