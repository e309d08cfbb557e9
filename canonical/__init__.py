"""The canonical row, its JSON Schema and validator, and the lossless CSV / JSON / JSONL formats."""
from .findings import Finding
from .row import ABSENT, CaseProfile, Row
from .validator import Checked, Validator

__all__ = ["ABSENT", "CaseProfile", "Checked", "Finding", "Row", "Validator"]
