"""Reads for reports and the dashboard, one module per concept (claims, judges, snapshots,
systems; `frames` turns a query into a DataFrame); every read is importable from here.

Column reads feed `metrics.services.report_compute`: each is ONE query over one table (joined
only to filter by project), fetched straight from the cursor into a pandas DataFrame, so a
1M-claim project costs a handful of queries, never one per claim. The snapshot reads are what
pages use: they read the stored report, never recount.
"""

from metrics.selectors.claims import (
    active_claim_columns,
    active_stratum_claim_ids,
    annotator_names,
    answer_columns,
    cited_claim_ids,
    claim_columns,
    claim_tags,
    claims_with_whole_queue_labels,
    fact_columns,
    gold_columns,
    ground_truth_columns,
    label_columns,
    label_design_columns,
    label_history_max_id,
    label_stratum_columns,
    labels_since_count,
    run_verdict_claim_ids,
    supported_evidence_columns,
)
from metrics.selectors.judges import (
    COUNTED_RUN_STATUSES,
    canary_columns,
    citation_columns,
    judge_bits_columns,
    judge_bits_threshold,
    judge_default_for_project,
    judge_get_by_name,
    judge_get_for_project,
    judge_stale_counts,
    judge_verify_columns,
    judges_for_project,
)
from metrics.selectors.snapshots import (
    snapshot_active_audit,
    snapshot_get_for_project,
    snapshot_latest_done,
    snapshot_latest_failed_after,
    snapshot_unfinished,
)
from metrics.selectors.systems import (
    pairwise_preference_rows,
    pairwise_verdict_rows,
    system_answer_columns,
    system_claim_columns,
    systems_for_project,
)

__all__ = [
    "answer_columns",
    "claim_columns",
    "label_stratum_columns",
    "claims_with_whole_queue_labels",
    "active_stratum_claim_ids",
    "run_verdict_claim_ids",
    "claim_tags",
    "gold_columns",
    "label_columns",
    "supported_evidence_columns",
    "annotator_names",
    "fact_columns",
    "cited_claim_ids",
    "label_history_max_id",
    "labels_since_count",
    "active_claim_columns",
    "label_design_columns",
    "ground_truth_columns",
    "COUNTED_RUN_STATUSES",
    "judge_verify_columns",
    "judge_stale_counts",
    "citation_columns",
    "canary_columns",
    "judges_for_project",
    "judge_get_for_project",
    "judge_get_by_name",
    "judge_default_for_project",
    "judge_bits_columns",
    "judge_bits_threshold",
    "snapshot_latest_done",
    "snapshot_unfinished",
    "snapshot_latest_failed_after",
    "snapshot_get_for_project",
    "snapshot_active_audit",
    "system_answer_columns",
    "system_claim_columns",
    "systems_for_project",
    "pairwise_verdict_rows",
    "pairwise_preference_rows",
]
