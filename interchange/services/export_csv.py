"""The export's CSV rows: one per claim, one group of columns per analyst and per judge
instrument, each cell written as `csv.writer` would (`csv_cell`)."""

import json
from dataclasses import dataclass

from annotate.csv_safe import FORMULA_TRIGGERS
from annotate.models import Passage, Project
from interchange.services.export_reads import (
    LABEL_METHOD,
    Batch,
    Lookups,
    instrument_name,
    project_annotators,
    project_runs,
)
from judges.models import JudgeRun

LABEL_FIELDS = (
    "verdict",
    "quote_passage",
    "quote_start",
    "quote_end",
    "quote_text",
    "note",
    "correct",
    "changed_after_reveal",  # "true" when changed after a reveal of the judge's or colleagues'
    # The spans after the first, when the label has several: JSON, as the jsonl's
    # `more_quotes` ([{"passage", "start", "end", "text"}], the passage named as quote_passage)
    "more_quotes",
)
FIXED_COLUMNS = (
    "answer_id",
    "claim_id",
    "position",
    "text",
    "origin",
    "tags",
    "citations",
    "risk_category",
    "abstention",
    "system",
    "question_id",
    "gold_verdict",
    "gold_source",
    "gold_reason",
)


def csv_cell(value) -> str:
    """One value as `csv.writer` (excel dialect, QUOTE_MINIMAL) writes `csv_neutral(value)`:
    None empty, a text quoted when it holds a comma, quote or line break, with its quotes
    doubled.

    Written by hand because most of a row's cells are empty analyst and judge columns (16
    analysts make 112 of them): csv.writer spends ~30 µs on such a row, a third of the
    export's CPU, where joining the filled cells to pre-made runs of commas takes ~2 µs.
    tests/annotate/test_export_expected.py checks it against csv.writer.
    """
    if value is None:
        return ""
    if value.__class__ is not str:
        return str(value)
    if value[:1] in FORMULA_TRIGGERS:
        value = "'" + value
    if '"' in value:
        return '"' + value.replace('"', '""') + '"'
    if "," in value or "\n" in value or "\r" in value:
        return '"' + value + '"'
    return value


@dataclass
class Columns:
    header: list[str]
    annotators: list[tuple[int, str]]
    instruments: list[str]
    runs: list[JudgeRun]


def csv_columns(project: Project) -> Columns:
    annotators = project_annotators(project)
    runs = project_runs(project)
    instruments = list(dict.fromkeys(instrument_name(run) for run in runs))
    header = list(FIXED_COLUMNS)
    for _pk, username in annotators:
        header += [f"label:{username}:{name}" for name in LABEL_FIELDS]
    for instrument in instruments:
        header += [f"judge:{instrument}:verdict", f"judge:{instrument}:confidence"]
    header.append("method")
    return Columns(header, annotators, instruments, runs)


def csv_header(project: Project) -> tuple[list[str], list[str], list[str]]:
    """The header, the analysts (usernames) and the judge instruments it has columns for."""
    columns = csv_columns(project)
    return columns.header, [name for _pk, name in columns.annotators], columns.instruments


class CsvLayout:
    """A row as its groups of cells, each group already CSV text: the claim's fixed cells, one
    group per analyst (7 cells), one per judge instrument (2 cells) and the method. A row
    starts from the empty groups (runs of commas) and fills the few its claim has."""

    def __init__(self, columns: Columns, lookups: Lookups):
        self.lookups = lookups
        analysts = len(columns.annotators)
        self.label_group = {pk: i for i, (pk, _name) in enumerate(columns.annotators)}
        group_of_instrument = {
            instrument: analysts + i for i, instrument in enumerate(columns.instruments)
        }
        self.verdict_group = {
            run.pk: group_of_instrument[instrument_name(run)] for run in columns.runs
        }
        # Seven empty cells are six commas, two are one.
        self.empty = ["," * (len(LABEL_FIELDS) - 1)] * analysts + [","] * len(columns.instruments)
        self.methods: dict[tuple[int, ...], str] = {(): csv_cell(LABEL_METHOD)}

    def method(self, run_ids: tuple[int, ...]) -> str:
        """The method cell of a claim judged by these runs (in run order): few distinct sets."""
        cell = self.methods.get(run_ids)
        if cell is None:
            methods = [LABEL_METHOD, *(self.lookups.run(pk).method for pk in run_ids)]
            cell = self.methods[run_ids] = csv_cell("; ".join(dict.fromkeys(methods)))
        return cell

    def lines(self, answers: list[tuple], batch: Batch) -> list[str]:
        """CSV lines of the claims of `answers` (id, external_id, risk_category, abstention,
        system name, system version, question_id).

        From the database, already csv text: each claim's id, position, text and origin,
        its gold's three cells, each quoted passage's name, and each label's cells from its
        start to its `correct`. Tags, citations and confidences are written here.
        """
        lines = []
        cell = csv_cell
        empty, label_group, verdict_group = self.empty, self.label_group, self.verdict_group
        gold_of, labels_of, verdicts_of = batch.gold, batch.labels, batch.verdicts
        citations_of, refs, more_of = batch.citations, batch.passage_refs, batch.more_spans
        for answer_id, external_id, risk, abstention, system, version, question in answers:
            answer_id_cell = cell(external_id)
            system_cell = cell(f"{system}@{version}" if version else system)
            answer_cells = (
                f"{cell(risk)},{'true' if abstention else 'false'},{system_cell},{cell(question)}"
            )
            for _answer, pk, tags, claim_cells in batch.claims.get(answer_id, ()):
                citations = citations_of.get(pk)
                gold = gold_of.get(pk)
                groups = empty.copy()
                for _claim, annotator, verdict, passage, cells in labels_of.get(pk, ()):
                    group = label_group.get(annotator)
                    if group is not None:  # else labelled after the header was read
                        ref = "" if passage is None else refs[passage]
                        more = more_of.get((pk, annotator))
                        more = _more_quotes_cell(more) if more else ""
                        groups[group] = f"{verdict},{ref},{cells},{more}"
                verdicts = verdicts_of.get(pk, ())
                # By run id: of two runs of one instrument, the newer verdict stays.
                for _claim, run_id, verdict, confidence in verdicts:
                    group = verdict_group.get(run_id)
                    if group is not None:
                        groups[group] = f"{verdict},{cell(confidence)}"
                lines.append(
                    ",".join(
                        [
                            answer_id_cell,
                            claim_cells,
                            "" if tags == "[]" else cell("; ".join(json.loads(tags))),
                            cell("; ".join(c[1] for c in citations)) if citations else "",
                            answer_cells,
                            ",," if gold is None else gold[1],
                            *groups,
                            self.method(tuple(v[1] for v in verdicts)),
                        ]
                    )
                )
        lines.append("")  # the last line's terminator
        return lines


def _more_quotes_cell(spans: list[tuple]) -> str:
    """The csv cell of a label's spans after the first: `more_quotes` as JSON."""
    return csv_cell(
        json.dumps(
            [
                {"passage": name, "start": start, "end": end, "text": text}
                for _pk, name, start, end, text in spans
            ],
            ensure_ascii=False,
        )
    )


def passage_refs_elsewhere(batch: Batch) -> None:
    """csv: name the passages quoted from another answer's pile too. label_save never makes
    such a quote, but one in the database is written as is."""
    quoted = {
        label[3] for labels in batch.labels.values() for label in labels if label[3] is not None
    }
    if elsewhere := sorted(quoted.difference(batch.passage_refs)):
        for pk, source_id, rank in Passage.objects.filter(pk__in=elsewhere).values_list(
            "pk", "source_id", "rank"
        ):
            batch.passage_refs[pk] = csv_cell(source_id or f"#{rank}")
