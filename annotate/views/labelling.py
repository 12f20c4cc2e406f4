"""The labelling screen: queue, save-and-next, undo. (Built out by the labelling work.)"""

from django.http import HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from annotate.access import project_view
from annotate.models import Role


@require_GET
@project_view(Role.ANALYST)
def label_next(request, project, membership):
    return HttpResponse("The labelling screen is not built yet.", content_type="text/plain")


urlpatterns = [
    path("p/<slug:slug>/label/", label_next, name="label-next"),
]
