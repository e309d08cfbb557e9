"""One rule for a case field a vendor also holds natively (LangSmith projections and criteria,
Braintrust facet tags): an edit made in the vendor wins over the carried copy, and is said."""
from __future__ import annotations

from evalconv.reports import ReadReport
from evalconv.vendors._common.records import take_native_edit


def test_an_edit_wins_and_is_said_in_the_vendor_s_words():
    case, report = {"caseFamily": "refunds", "evaluationCriteria": ["a"]}, ReadReport("langsmith")
    take_native_edit(case, "caseFamily", "returns", "$.metadata.case_family", "LangSmith", "r1", report)
    assert case["caseFamily"] == "returns"
    [entry] = report.to_json()["edited"]
    assert entry["path"] == "$.metadata.case.caseFamily" and entry["ids"] == ["r1"]
    assert entry["reason"] == ("$.metadata.case_family was edited in LangSmith; the edit is kept "
                               "(it differs from the copy in metadata.case.caseFamily)")


def test_an_equal_value_is_no_edit_and_none_removes_the_field():
    case, report = {"caseFamily": "refunds", "evaluationCriteria": ["a"]}, ReadReport("langsmith")
    take_native_edit(case, "caseFamily", "refunds", "tag family:<value>", "Braintrust", "r1", report)
    assert "edited" not in report.to_json()
    take_native_edit(case, "evaluationCriteria", None, "$.outputs.criteria", "LangSmith", "r1", report)
    assert "evaluationCriteria" not in case and len(report.to_json()["edited"]) == 1
