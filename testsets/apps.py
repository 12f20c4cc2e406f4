from django.apps import AppConfig


class TestsetsConfig(AppConfig):
    name = "testsets"
    verbose_name = "Test sets"

    def ready(self) -> None:
        # Registered at start, so a web process can enqueue by name (`current_app.tasks[...]`)
        # and the worker finds the system-under-test task (it is not in a tasks.py module).
        from testsets import sut_tasks, tasks  # noqa: F401
