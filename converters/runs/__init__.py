"""Runs: what a harness produced when it ran the cases (its readers, the run store and index,
attempt numbering, verdicts, release gates and the run report)."""
