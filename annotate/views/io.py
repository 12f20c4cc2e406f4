"""Import (upload) and export (download) for leads. (Built out by the import/export work.)"""

from django.http import HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from annotate.access import project_view
from annotate.models import Role


@require_GET
@project_view(Role.LEAD)
def import_form(request, project, membership):
    return HttpResponse("Import is not built yet.", content_type="text/plain")


@require_GET
@project_view(Role.LEAD)
def export_claims(request, project, membership):
    return HttpResponse("Export is not built yet.", content_type="text/plain")


urlpatterns = [
    path("p/<slug:slug>/import/", import_form, name="import"),
    path("p/<slug:slug>/export/", export_claims, name="export"),
]
