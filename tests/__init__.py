"""The test suite (pytest: `make test`)."""

import os

# One BLAS/OpenMP thread per test process, set before numpy, scipy or scikit-learn load their
# BLAS (each reads these once; this package is imported before any conftest). The suite runs on
# two processes of a two-core machine, and a BLAS pool per process spinning on small matrices made
# the scikit-learn tests 5× slower (test_combination_is_offered_…: 65 s with OpenBLAS' own
# threads under load, 12 s with one).
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")
