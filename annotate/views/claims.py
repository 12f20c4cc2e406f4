"""Claim splitting and editing by leads."""

urlpatterns: list = []
