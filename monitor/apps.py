from django.apps import AppConfig


class MonitorConfig(AppConfig):
    name = "monitor"
    verbose_name = "Monitor"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # services enqueue by registered name: register the tasks in every process
        from monitor import tasks  # noqa: F401
