"""The report's inputs: one read per table (`metrics.selectors`) into arrays aligned on claims."""

import math

import numpy as np
import pandas as pd

from annotate.models import ClaimTag, Project
from metrics import selectors
from metrics.services.audit_design import audit_design_read
from metrics.services.common import Progress, _codes


def _answerable_key(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    return "answerable" if bool(value) else "unanswerable"


class _Data:
    """Everything the report needs, as aligned arrays over the project's claims.

    Read in this order (the progress stages say which table is being read): answers, claims
    with their gold verdicts, claim tags, labels, facts and evidence, citations.
    """

    def __init__(self, *, project: Project, progress: Progress, system=None) -> None:
        # `system`: only that system's answers (and their claims, labels, facts) count.
        self.system = system
        progress(0.02, "reading answers")
        self._read_answers(project)
        progress(0.06, "reading claims")
        claims = selectors.claim_columns(project=project)
        if system is not None:
            claims = claims[claims["answer_id"].isin(self.answers["answer_id"])]
            claims = claims.reset_index(drop=True)
        # Every claim of the answers read, abstentions' too (a judge's verdicts on them).
        self.all_claim_ids = claims["claim_id"].to_numpy(dtype=np.int64)
        claims = claims.merge(
            self.answers[["answer_id", "risk_category", "abstention"]], on="answer_id", how="left"
        )
        progress(0.12, "reading gold verdicts")
        self._read_gold(project, claims)
        progress(0.18, "reading claim tags")
        self._read_tags(project)
        progress(0.24, "reading labels")
        self._read_labels(project)
        self.design = audit_design_read(project=project, data=self)
        progress(0.3, "reading facts and citations")
        self._read_facts(project)
        self.cited = np.isin(self.claim_ids, selectors.cited_claim_ids(project=project))

    def _read_answers(self, project: Project) -> None:
        answers = selectors.answer_columns(project=project)
        if self.system is not None:
            answers = answers[answers["system_id"] == self.system.pk].reset_index(drop=True)
        answers["answerable"] = answers["answerable"].map(_answerable_key)
        self.answers = answers

    def _read_gold(self, project: Project, claims: pd.DataFrame) -> None:
        gold = selectors.gold_columns(project=project)
        self.gold_sources = gold.set_index("claim_id")["source"]
        claims = claims.merge(gold, on="claim_id", how="left")
        claims["gold"] = _codes(claims["verdict"])
        claims = claims.drop(columns=["verdict"])
        self.claims_in_abstentions = int(claims["abstention"].sum())
        # Abstentions are counted apart, never as faithfulness failures.
        self.claims = claims[~claims["abstention"]].reset_index(drop=True)
        self.claim_ids = self.claims["claim_id"].to_numpy(dtype=np.int64)

    def _read_tags(self, project: Project) -> None:
        tags = selectors.claim_tags(project=project)
        tags = tags[tags["claim_id"].isin(self.claim_ids)]
        tag_names = list(ClaimTag.values) + sorted(set(tags["tag"]) - set(ClaimTag.values))
        self.tag_masks = {
            tag: np.isin(self.claim_ids, tags.loc[tags["tag"] == tag, "claim_id"].to_numpy())
            for tag in tag_names
        }

    def _read_labels(self, project: Project) -> None:
        self.labels = selectors.label_columns(project=project)
        if self.system is not None:
            labels = self.labels
            self.labels = labels[labels["claim_id"].isin(self.all_claim_ids)].reset_index(drop=True)
        self.annotators = selectors.annotator_names(
            user_ids=self.labels["annotator_id"].unique().tolist()
        )
        self.labels["code"] = _codes(self.labels["verdict"])

    def _read_facts(self, project: Project) -> None:
        answers = self.answers
        facts = selectors.fact_columns(project=project)
        abstaining = answers.loc[answers["abstention"], "answer_id"]
        self.facts = facts[~facts["answer_id"].isin(abstaining)].reset_index(drop=True)
        self.facts = self.facts.merge(answers[["answer_id", "risk_category"]], on="answer_id")
        # Evidence quotes only matter where facts are marked.
        self.evidence = (
            selectors.supported_evidence_columns(project=project).pipe(
                lambda e: (
                    e[e["claim_id"].isin(self.all_claim_ids)] if self.system is not None else e
                )
            )
            if len(self.facts)
            else pd.DataFrame({"claim_id": [], "passage_id": [], "start": [], "end": []})
        )

    def answer_ids(self) -> np.ndarray:
        return self.claims["answer_id"].to_numpy()

    def gold_mask(self) -> np.ndarray:
        return self.claims["gold"].to_numpy() >= 0
