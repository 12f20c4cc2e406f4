from django.apps import AppConfig


class InterchangeConfig(AppConfig):
    """The file formats that span the floors below: import and export of answers, claims,
    labels, gold and judge verdicts (native, RAGAS, RAGChecker), import jobs, the demo."""

    name = "interchange"
    verbose_name = "Interchange"

    def ready(self) -> None:
        # Registers the import task in every process, so services can enqueue it by name
        # (interchange.services.import_jobs never imports the task module).
        from interchange import tasks  # noqa: F401
