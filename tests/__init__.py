"""The test suite (pytest: `make test`)."""

import os

# One BLAS/OpenMP thread per test process, set before numpy, scipy or scikit-learn load their
# BLAS (each reads these once; this package is imported before any conftest). The suite runs on
# two processes of a two-core machine, and a BLAS pool per process spinning on small matrices made
# the scikit-learn tests 5× slower (test_combination_is_offered_…: 65 s with OpenBLAS' own
# threads under load, 12 s with one).
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")

# `make test` runs on two processes (pytest-xdist): each gets a Redis database of its own (the
# broker URL's number plus the process's number: CI's redis://…/0 gives gw0 db 0 and gw1 db 1),
# so one process's worker test, which purges its queues, never takes the other's tasks. Celery
# reads CELERY_BROKER_URL from the environment first, and worker processes inherit it.
_xdist = os.environ.get("PYTEST_XDIST_WORKER", "")
_broker = os.environ.get("CELERY_BROKER_URL", "")
if _xdist.startswith("gw") and _broker.startswith("redis://"):
    from urllib.parse import urlsplit, urlunsplit

    _parts = urlsplit(_broker)
    _db = int(_parts.path.strip("/") or 0) + int(_xdist[2:])
    if _db > 15:
        raise RuntimeError(
            f"CELERY_BROKER_URL {_broker}: process {_xdist} would use Redis database {_db}; "
            "Redis has 0-15: give a lower database number or fewer processes (TEST_WORKERS)"
        )
    os.environ["CELERY_BROKER_URL"] = urlunsplit(_parts._replace(path=f"/{_db}"))
