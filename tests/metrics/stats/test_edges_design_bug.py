"""Possible bug (not fixed; see the helper's report): `design_ppi_mean` takes its
independent-claims shortcut when the gold ids are distinct and the rest ids are distinct, even
if the SAME answers hold both gold and unaudited claims. Its docstring promises the shortcut
only "with one stratum and one claim per answer (gold and rest)", and `_answers_span_cells`
exists to add the covariance of such answers; the shortcut skips it. Expected to FAIL today.
"""

import numpy as np

from metrics.stats import design as dz


def test_ppi_answers_shared_by_gold_and_rest_are_clustered():
    y = np.array([1, 0, 1, 0], float)
    fg = np.array([0.9, 0.4, 0.7, 0.2])
    fr = np.array([0.8, 0.3, 0.6])
    got = dz.design_ppi_mean(y, fg, fr, ["a", "b", "c", "d"], ["a", "b", "c"])
    # answers a, b, c each hold two claims: not "one claim per answer"
    assert got.method != "PPI++, normal interval, one claim per answer."
