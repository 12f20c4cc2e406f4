from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "Judges"

    def ready(self) -> None:
        # Every process (web, worker, manage.py) refuses to start on a bad endpoint
        # declaration, with the entry and field named, rather than fail at the first call.
        from judges.endpoints import endpoints_declared

        endpoints_declared()

        # annotate asks judges through hooks (annotate/hooks.py) instead of importing it.
        from judges import claim_hooks

        claim_hooks.register()
        # Services enqueue tasks by name (judges.services.task): the task module must be
        # registered in every process, web and worker alike.
        from judges import tasks  # noqa: F401
