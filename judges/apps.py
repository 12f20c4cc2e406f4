from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "Judges"

    def ready(self) -> None:
        # Every process (web, worker, manage.py) refuses to start on a bad endpoint
        # declaration, with the entry and field named, rather than fail at the first call.
        from judges.endpoints import endpoints_declared

        endpoints_declared()
