from django.apps import AppConfig


class TestsetsConfig(AppConfig):
    name = "testsets"
    verbose_name = "Test sets"

    def ready(self) -> None:
        # Registered at start, so a web process can enqueue by name (`current_app.tasks[...]`)
        # and the worker finds the system-under-test task (it is not in a tasks.py module).
        from annotate import hooks
        from testsets import sut_tasks, tasks  # noqa: F401
        from testsets.services.truth import claim_ground_truth

        # annotate's labelling screen asks for a claim's ground truth through a hook.
        hooks.claim_ground_truth.register(claim_ground_truth)
