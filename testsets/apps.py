from django.apps import AppConfig


class TestsetsConfig(AppConfig):
    name = "testsets"
    verbose_name = "Test sets"

    def ready(self) -> None:
        # The worker finds the system-under-test task here (it is not in a tasks.py module).
        from testsets import sut_tasks  # noqa: F401
