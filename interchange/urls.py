"""The import and export pages; config/urls.py serves them in the `annotate` URL namespace
(`annotate:import`, `annotate:export`, ...), the names templates and tests have always used."""

from interchange.views import urlpatterns

__all__ = ["urlpatterns"]
