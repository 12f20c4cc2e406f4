from django.apps import AppConfig


class TestsetsConfig(AppConfig):
    name = "testsets"
    verbose_name = "Test sets"
