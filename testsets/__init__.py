"""Critical-information test sets: the team's documents, questions generated from them with
verified ground truth, their review and publication (issue 27)."""
