"""Adjudication, facts and the contradictions page."""

urlpatterns: list = []
