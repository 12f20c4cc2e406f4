"""The selectors' text columns: a column PostgreSQL returns all NULL arrives as float64 NaN;
it must read as empty text, on pandas 3 as on 2, without a warning that turns into an error in
a later pandas."""

import warnings

import numpy as np
import pandas as pd

from metrics.selectors.frames import _text


def test_an_all_null_text_column_reads_as_empty_text_without_a_warning():
    frame = pd.DataFrame({"stratum": [np.nan, np.nan], "verdict": ["SUPPORTED", None]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _text(frame, "stratum", "verdict")
    assert out["stratum"].tolist() == ["", ""]
    assert out["verdict"].tolist() == ["SUPPORTED", ""]


def test_an_empty_frame_keeps_its_text_columns_as_objects():
    out = _text(pd.DataFrame({"stratum": pd.Series([], dtype="float64")}), "stratum")
    assert out["stratum"].dtype == object
    assert len(out) == 0
