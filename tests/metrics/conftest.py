import os


def pytest_collection_modifyitems(config, items):
    """Under mutmut (`make mutation`), run the tests without a database first: they kill most
    mutants of `metrics.stats` in milliseconds, before a report test builds its project. mutmut
    orders by call time, which leaves out the seconds a planted project's fixture takes."""
    if os.environ.get("MUTANT_UNDER_TEST"):
        items.sort(key=lambda item: item.get_closest_marker("django_db") is not None)
