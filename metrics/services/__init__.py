"""Report assembly and snapshots: the only glue between the database and `metrics.stats`.

select (`metrics.selectors`, one query per table) → numpy/pandas arrays → `metrics.stats` →
a JSON-safe report dict → a `ReportSnapshot` row the dashboard reads.

One module per thing computed; `report` calls them in the order of the report's sections:
- `inputs`: the report's inputs, read once (`_Data`).
- `audit_design`: each claim's design stratum, the gold left out (labels made outside the queue),
  `design_rate` (clustered by answer, stratified by N_h/N) and the report's "design" section.
- `rates`: claim rates over gold, project-wide and per risk category and claim tag.
- `abstention_coverage`: abstention rates and fact coverage with F1.
- `analysts`: inter-analyst agreement.  `method`: the method strings.
- `judge_audit`: one instrument of a judge against gold; `instruments`: which instruments.
- `calibration` (ECE, frontier) and `conformal` (CRC, and what a snapshot keeps for α);
  `crc_splits`: CRC over many seeded calibration/test splits and the confidence's AUC.
- `by_category`: the judge's sensitivity/specificity per risk category, their equality test,
  and the per-category correction when they differ.
- `audit_card`: one instrument's card.  `snapshots`: the rows the dashboard reads.
- `common`: the verdict vocabulary and small helpers.

What the report counts (DESIGN.md "Metrics: definitions"):
- Gold verdicts are the human truth. Claim rates are over gold claims of answers that are not
  abstentions; abstentions are reported on their own, split by answerable.
- A judge's audit belongs to one instrument (model + prompt version): verdicts of the judge's
  verify runs (done or running) are grouped by (model, prompt version), the newest parseable
  verdict per claim counts, UNPARSEABLE is only counted, canary runs feed only the canary pass
  rate.
- Judge verdicts made on a claim's previous text (`stale`: a lead edited, split or merged the
  claim since) are read nowhere; each instrument says how many it left out.
- Coverage by risk category is over the facts of that category's answers; by claim tag (tags
  belong to claims, facts to answers) over the facts of answers with at least one claim that
  carries the tag, grounded by any of their gold-SUPPORTED claims. F1 pairs it with the
  group's faithfulness. `COVERAGE_BY_TAG` is the sentence the report and dashboard show.

Every name is re-exported here, as before the split. Monkeypatch a name in the module that
uses it (e.g. `metrics.services.snapshots.report_build`,
`metrics.services.conformal.CRC_INPUTS_MAX_CLAIMS`): patching the re-export changes nothing.
"""

from metrics.services.abstention_coverage import COVERAGE_BY_RISK_CATEGORY, COVERAGE_BY_TAG
from metrics.services.audit_card import audit_card, audit_card_rows
from metrics.services.calibration import CALIBRATION_FOLDS, FRONTIER_CUTS
from metrics.services.common import Progress, json_safe
from metrics.services.conformal import (
    CRC_ALPHA_GRID,
    CRC_CAVEAT,
    CRC_INPUTS_MAX_CLAIMS,
    CRC_SEED,
    DEFAULT_ALPHA,
    crc_from_inputs,
)
from metrics.services.instruments import instruments_left_out_text
from metrics.services.judge_audit import AGREEMENT_WARNING_BELOW
from metrics.services.report import Report, report_build, report_compute, report_public
from metrics.services.snapshots import (
    SNAPSHOT_STALE_AFTER,
    snapshot_compute,
    snapshot_create,
    snapshot_request,
    snapshot_request_every_system,
)

__all__ = [
    "AGREEMENT_WARNING_BELOW",
    "CALIBRATION_FOLDS",
    "COVERAGE_BY_RISK_CATEGORY",
    "COVERAGE_BY_TAG",
    "CRC_ALPHA_GRID",
    "CRC_CAVEAT",
    "CRC_INPUTS_MAX_CLAIMS",
    "CRC_SEED",
    "DEFAULT_ALPHA",
    "FRONTIER_CUTS",
    "SNAPSHOT_STALE_AFTER",
    "Progress",
    "audit_card",
    "audit_card_rows",
    "crc_from_inputs",
    "instruments_left_out_text",
    "json_safe",
    "Report",
    "report_build",
    "report_compute",
    "report_public",
    "snapshot_compute",
    "snapshot_create",
    "snapshot_request",
    "snapshot_request_every_system",
]
