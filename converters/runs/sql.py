"""SQL over the run store: DuckDB views joining a store's results, attempts and a case set.

`register(con, store, cases)` reads the case set with evalconv's own reader and validator (the
cases `evalconv report` counts, their slices, the ids and inputs attempts link by) into three
tables, and defines views over the store's JSONL files that DuckDB scans itself (nothing is
copied; a query reads the files as they are then). docs/scale.md lists them and says which of the
report's rules the SQL expresses and which stay in `evalconv report`.

The views follow `runs/report.py` rule for rule where they can:
- an attempt links to its case by `caseId`, else by its `caseRef` (a name, an id only one tool
  spells, such as a LangSmith example id or an Opik item id of evalconv's export, an input text no
  other case shares); an attempt id is counted once;
- each evaluator's newest result on an attempt (the later line of results.jsonl) is its verdict,
  the harness's newest `role: verdict` result is the harness's verdict;
- the admissibility map (`evalconv_admissibility`, made from canonical/admissibility.py) bars
  or admits each verdict by the case's oracle type; a barred one is excluded;
- a person's admitted verdict decides its attempt; else the harness's own verdict, when no
  admitted check is pending; else the admitted checks; a harness's overriding human rating is
  human-expert where the oracle bars rubric-human only;
- failed / unscored / passed per case, `passRate = passed / (passed + failed)`.
What they leave to `evalconv report`: `--evaluator` and `--threshold` (re-reading a verdict),
the gates' judge validation, failure lists, headlines, the typing table and the ledger.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.errors import UsageError
from ..canonical.vocabulary import EVALUATOR_TYPES, HUMAN_TYPES
from .report import DEFAULT_BY, RunReport
from .store import ATTEMPTS, RESULTS

VIEWS = ("evalconv_admissibility", "evalconv_cases", "evalconv_case_slices", "evalconv_attempts", "evalconv_results",
         "_evalconv_latest", "_evalconv_judged",
         "evalconv_verdicts", "evalconv_attempt_outcomes", "evalconv_run_case_outcomes", "evalconv_case_outcomes",
         "evalconv_pass_rate", "evalconv_slice_pass_rates", "evalconv_pass_rate_by_harness_evaluator",
         "evalconv_flags", "evalconv_newly_failing")

_ATTEMPT_COLUMNS = {"id": "VARCHAR", "caseId": "VARCHAR", "caseRef": "STRUCT(kind VARCHAR, value VARCHAR)",
                    "harness": "STRUCT(name VARCHAR, version VARCHAR, run VARCHAR)",
                    "system": "STRUCT(name VARCHAR, version VARCHAR)", "status": "VARCHAR"}
_RESULT_COLUMNS = {"id": "VARCHAR", "attemptId": "VARCHAR", "evaluator": "STRUCT(type VARCHAR, name VARCHAR)",
                   "score": "DOUBLE", "passed": "BOOLEAN", "role": "VARCHAR", "reviewStatus": "VARCHAR"}


def duckdb_module() -> Any:
    try:
        import duckdb
    except ImportError:
        raise UsageError("SQL over the run store needs DuckDB: pip install 'evalconv[dask]'") from None
    return duckdb


class _CaseTable(RunReport):
    """The report's own reading of the case set, keeping each case's input text as well."""

    def __init__(self, by: Iterable[str]) -> None:
        super().__init__(by)
        self.input_text: dict[int, str] = {}

    def _add_case(self, value: dict[str, Any]) -> None:
        before = len(self.cases)
        super()._add_case(value)
        if len(self.cases) > before and isinstance(value.get("input"), str):
            self.input_text[before] = value["input"]


def _scan(path: str, columns: dict[str, str]) -> str:
    """A JSONL store file as DuckDB reads it, each line with its line number (`line_no`): a line
    that is not a JSON object (cut short by an interrupted import, damaged) is skipped, as the
    report skips it into its ledger; a missing file is an empty table."""
    if not os.path.exists(path):
        nulls = ", ".join(f'NULL::{type_} AS "{name}"' for name, type_ in columns.items())
        return f"(SELECT {nulls}, 0::BIGINT AS line_no WHERE false)"
    quoted = path.replace("'", "''")
    struct = "{" + ", ".join(f"'{name}': '{type_}'" for name, type_ in columns.items()) + "}"
    # Numbered by a parallel scan kept in the file's order: a materialized CTE, which the scan
    # fills in order, then `row_number() OVER ()` (both on DuckDB's list of order-preserving
    # operations, docs/sql/dialect/order_preservation). `WITH ORDINALITY` numbers them in a
    # one-thread streaming scan, twice the wall time at 1M results; it is kept for a connection
    # set to `preserve_insertion_order = false`, where the CTE would not keep the order (the
    # setting is a constant when the query is planned, so only one branch is scanned).
    source = f"read_json('{quoted}', format='newline_delimited', ignore_errors=true, columns={struct})"
    keeps_order = "current_setting('preserve_insertion_order')"
    return (f"(WITH scanned AS MATERIALIZED (SELECT * FROM {source} WHERE {keeps_order}) "
            f"SELECT *, row_number() OVER () AS line_no FROM scanned "
            f"UNION ALL SELECT * EXCLUDE (ordinality), ordinality AS line_no FROM {source} WITH ORDINALITY "
            f"WHERE NOT {keeps_order})")


_CASE_COLUMNS = {"case_no": "BIGINT", "case_id": "VARCHAR", "oracle_type": "VARCHAR", "case_family": "VARCHAR",
                 "starter": "BOOLEAN", "release_gate": "BOOLEAN", "severity": "VARCHAR", "reason": "VARCHAR",
                 "input_text": "VARCHAR"}
_REF_COLUMNS = {"kind": "VARCHAR", "value": "VARCHAR", "case_id": "VARCHAR"}
_SLICE_COLUMNS = {"case_id": "VARCHAR", "slice": "VARCHAR", "value": "VARCHAR"}


def _table(con: Any, name: str, columns: dict[str, str], rows: list[dict[str, Any]]) -> None:
    """A table of Python rows, typed, handed over column by column (one list parameter each: a list
    of plain values converts several times faster than a list of dicts; no pandas, no pyarrow)."""
    con.execute(f"CREATE OR REPLACE TABLE {name} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
    if rows:
        values = ", ".join(f"unnest($c{n}::{t}[])" for n, t in enumerate(columns.values()))
        con.execute(f"INSERT INTO {name} SELECT {values}", {f"c{n}": [row[c] for row in rows] for n, c in enumerate(columns)})


def _cases_tables(con: Any, cases: Sequence[str], by: Sequence[str]) -> None:
    """The report's own table of the cases, with its input text where no other case shares it, and
    each case id as every harness reader spells it in the caseRef kinds only its tool uses (a
    LangSmith example id, an Opik item id: the readers' `case_refs`, as the report links them)."""
    table = _CaseTable(by)
    for path in cases:
        table.add_cases(path)
    linkable = {index for index in table._inputs.values() if index >= 0}
    _table(con, "evalconv_cases", _CASE_COLUMNS, [
        {"case_no": i, "case_id": c.id, "oracle_type": c.oracle, "case_family": c.family, "starter": c.starter,
         "release_gate": c.gated, "severity": c.severity, "reason": c.reason,
         "input_text": table.input_text.get(i) if i in linkable else None} for i, c in enumerate(table.cases)])
    _table(con, "evalconv_case_refs", _REF_COLUMNS, [
        {"kind": kind, "value": ref, "case_id": table.cases[index].id}
        for kind, (_, spelled) in table._refs.items() for ref, index in spelled.items()])
    _table(con, "evalconv_case_slices", _SLICE_COLUMNS, [
        {"case_id": c.id, "slice": name, "value": value} for c in table.cases for name in table.by for value in c.slices[name]])


def _admissibility_values() -> str:
    rows = [f"('{oracle}', '{type_}', '{admits.get(type_, ('barred',))[0]}')"
            for oracle, admits in ADMISSIBILITY.items() for type_ in EVALUATOR_TYPES]
    return ", ".join(rows)


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def register(con: Any, store: str, cases: str | Sequence[str], *, by: Iterable[str] | None = None) -> list[str]:
    """Define the evalconv views on DuckDB connection `con` over run store folder `store` and the
    case set file(s) `cases`, sliced by `by` (default: `evalconv report`'s slices). Returns the
    names defined. Calling it again replaces them."""
    from .store import check_store_files, is_store

    if not is_store(store):
        raise UsageError("a run store folder holds attempts.jsonl and results.jsonl", source=store)
    check_store_files(store)
    case_files = [cases] if isinstance(cases, str) else list(cases)
    _cases_tables(con, case_files, list(dict.fromkeys(by or DEFAULT_BY)))
    attempts = _scan(os.path.join(store, ATTEMPTS), _ATTEMPT_COLUMNS)
    results = _scan(os.path.join(store, RESULTS), _RESULT_COLUMNS)
    types, humans = _sql_list(EVALUATOR_TYPES), _sql_list(HUMAN_TYPES)
    for statement in _VIEWS.format(admissibility=_admissibility_values(), attempts=attempts, results=results,
                                   types=types, humans=humans).split(";\n"):
        if statement.strip():
            con.execute(statement)
    return list(VIEWS)


DEFAULT_QUERIES = ("SELECT * FROM evalconv_pass_rate",
                   "SELECT * FROM evalconv_pass_rate_by_harness_evaluator ORDER BY harness, evaluator_type NULLS LAST")


@dataclass
class Answer:
    """A query's answer: its column names and rows (plain Python values). `streamed`: DuckDB ran
    out of memory reading the store on several threads, and the answer was read again in one
    streaming scan (`STREAMED_NOTE`)."""

    query: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    streamed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "columns": self.columns, "rows": [dict(zip(self.columns, row)) for row in self.rows]}


STREAMED_NOTE = ("DuckDB ran out of memory numbering the run store's lines on several threads; they were numbered in "
                 "one streaming scan instead (less memory, slower; preserve_insertion_order = false, so a query "
                 "without ORDER BY may list its rows in another order)")


def query(store: str, cases: str | Sequence[str], queries: Sequence[str] = DEFAULT_QUERIES, *,
          by: Iterable[str] | None = None) -> list[Answer]:
    """`evalconv runs sql`: the views registered on a new in-memory connection, then each query's
    answer. A query DuckDB refuses is a one-line usage error naming it. A query that runs out of
    memory is asked again with `preserve_insertion_order = false`, where the views number the
    store's lines in one streaming scan (`_scan`), and so are the queries after it."""
    duckdb = duckdb_module()
    with duckdb.connect() as con:  # closed on the way out, the database's memory released with it
        con.execute("SET enable_progress_bar = false")
        register(con, store, cases, by=by)
        out = []
        streamed = False
        for text in queries:
            try:
                try:
                    answer = _answer(con, text)
                except duckdb.OutOfMemoryException:
                    if streamed or not con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]:
                        raise
                    con.execute("SET preserve_insertion_order = false")
                    streamed = True
                    answer = _answer(con, text)
                    answer.streamed = True
            except duckdb.Error as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                if isinstance(err, duckdb.OutOfMemoryException):
                    first += " (give DuckDB more memory with a first query: \"SET memory_limit = '8GB'\")"
                raise UsageError(f"the query {text!r} failed: {first}") from None
            out.append(answer)
    return out


def _answer(con: Any, text: str) -> Answer:
    result = con.execute(text)
    columns = [d[0] for d in result.description or ()]
    return Answer(text, columns, result.fetchall() if columns else [])


# One statement per `;\n`. Booleans aggregate with bool_or; a missing verdict is NULL.
_VIEWS = """
CREATE OR REPLACE VIEW evalconv_admissibility AS
SELECT * FROM (VALUES {admissibility}) AS t(oracle_type, evaluator_type, verdict);

CREATE OR REPLACE VIEW evalconv_attempts AS
WITH scanned AS (
    SELECT * FROM {attempts} WHERE id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY line_no) = 1
)
SELECT a.id AS attempt_id, a.line_no, coalesce(nullif(a.harness.name, ''), 'unknown') AS harness, a.harness.run AS run, a.system.name AS system,
       a.status, coalesce(by_id.case_id, by_name.case_id, by_ref.case_id, by_input.case_id) AS case_id
FROM scanned a
LEFT JOIN evalconv_cases by_id ON by_id.case_id = a.caseId
LEFT JOIN evalconv_cases by_name ON a.caseRef.kind = 'name' AND by_name.case_id = a.caseRef.value
LEFT JOIN evalconv_case_refs by_ref ON by_ref.kind = a.caseRef.kind AND by_ref.value = a.caseRef.value
LEFT JOIN evalconv_cases by_input ON a.caseRef.kind = 'input' AND by_input.input_text = a.caseRef.value;

CREATE OR REPLACE VIEW evalconv_results AS
SELECT r.id AS result_id, r.line_no, a.attempt_id, a.case_id, a.harness, a.run,
       coalesce(r.evaluator.name, 'None') AS evaluator, r.evaluator.type AS declared_type, r.passed, r.score,
       coalesce(r.role, 'component') AS role, r.reviewStatus AS review_status
FROM {results} r JOIN evalconv_attempts a ON a.attempt_id = r.attemptId;

CREATE OR REPLACE VIEW _evalconv_latest AS
WITH newest AS (  -- one max() a group: the line number with the verdict packed under it (7 bits)
    SELECT attemptId AS attempt_id, role = 'verdict' AS harness_verdict, evaluator, max(line_no * 128 + code) % 128 AS code
    FROM (SELECT attemptId, line_no, coalesce(role, 'component') AS role,
                 CASE WHEN role = 'verdict' THEN '' ELSE coalesce(evaluator.name, 'None') END AS evaluator,
                 CASE WHEN passed THEN 1 WHEN NOT passed THEN 0 ELSE 2 END
                   + 3 * coalesce(list_position([{types}], evaluator.type), 0)
                   + 24 * CASE role WHEN 'override' THEN 1 WHEN 'verdict' THEN 2 ELSE 0 END AS code
          FROM {results})
    GROUP BY ALL
), unpacked AS (
    SELECT attempt_id, harness_verdict, evaluator,
           CASE code % 3 WHEN 1 THEN true WHEN 0 THEN false END AS passed,
           CASE WHEN (code // 3) % 8 > 0 THEN [{types}][(code // 3) % 8] END AS type,
           ['component', 'override', 'verdict'][code // 24 + 1] AS role
    FROM newest
)
SELECT n.attempt_id, a.case_id, a.harness, a.run, c.oracle_type, n.harness_verdict, n.evaluator,
       n.passed, n.role,
       CASE WHEN n.harness_verdict THEN NULL
            WHEN n.role = 'override' AND n.type = 'rubric-human'
                 AND rh.verdict = 'barred' AND he.verdict <> 'barred' THEN 'human-expert'
            ELSE n.type END AS evaluator_type
FROM unpacked n
JOIN evalconv_attempts a USING (attempt_id)
JOIN evalconv_cases c USING (case_id)
LEFT JOIN evalconv_admissibility rh ON rh.oracle_type = c.oracle_type AND rh.evaluator_type = 'rubric-human'
LEFT JOIN evalconv_admissibility he ON he.oracle_type = c.oracle_type AND he.evaluator_type = 'human-expert';

CREATE OR REPLACE VIEW _evalconv_judged AS
SELECT l.*, CASE WHEN l.harness_verdict THEN NULL WHEN l.evaluator_type IS NULL THEN 'ok'
                 ELSE coalesce(m.verdict, 'barred') END AS admitted,
       NOT l.harness_verdict AND coalesce(l.evaluator_type IN ({humans}), false) AND l.passed IS NOT NULL
           AND coalesce(m.verdict, 'ok') <> 'barred' AS by_person
FROM _evalconv_latest l
LEFT JOIN evalconv_admissibility m ON m.oracle_type = l.oracle_type AND m.evaluator_type = l.evaluator_type;

CREATE OR REPLACE VIEW evalconv_verdicts AS
SELECT * EXCLUDE (harness_verdict) FROM _evalconv_judged WHERE NOT harness_verdict;

CREATE OR REPLACE VIEW evalconv_attempt_outcomes AS
WITH per_attempt AS (
    SELECT attempt_id, any_value(case_id) AS case_id, any_value(harness) AS harness, any_value(run) AS run,
           count(*) FILTER (WHERE admitted = 'barred') AS excluded,
           count(*) FILTER (WHERE admitted = 'cond') AS conditional_results,
           count(*) FILTER (WHERE NOT harness_verdict AND evaluator_type IS NULL AND passed IS NOT NULL) AS untyped,
           count(*) FILTER (WHERE by_person) AS people,
           count(*) FILTER (WHERE admitted <> 'barred' AND NOT by_person) AS checks,
           bool_or(passed = false) FILTER (WHERE by_person) AS people_fail,
           bool_or(passed) FILTER (WHERE by_person) AS people_pass,
           bool_or(passed = false) FILTER (WHERE admitted <> 'barred' AND NOT by_person) AS checks_fail,
           bool_or(passed IS NULL) FILTER (WHERE admitted <> 'barred' AND NOT by_person) AS checks_pending,
           bool_or(passed AND admitted = 'cond') FILTER (WHERE admitted <> 'barred' AND NOT by_person) AS checks_pass_cond,
           bool_or(passed AND admitted <> 'cond') FILTER (WHERE admitted <> 'barred' AND NOT by_person) AS checks_pass_sure,
           bool_or(harness_verdict) AS has_verdict,
           bool_or(passed) FILTER (WHERE harness_verdict) AS said_pass,
           bool_or(passed = false) FILTER (WHERE harness_verdict) AS said_fail
    FROM _evalconv_judged GROUP BY attempt_id
), decided AS (
    SELECT *, people + checks > 0 AS decided,
           coalesce(has_verdict AND people = 0 AND NOT coalesce(checks_pending, false), false) AS by_harness,
           coalesce(said_pass, false) AS said_true, coalesce(said_fail, false) AS said_false
    FROM per_attempt
)
SELECT attempt_id, case_id, harness, run, excluded, conditional_results, untyped, decided, by_harness,
       decided AND CASE WHEN people > 0 THEN coalesce(people_fail, false)
                        WHEN by_harness THEN said_false
                        ELSE coalesce(checks_fail, false) END AS fail,
       decided AND CASE WHEN people > 0 THEN false
                        WHEN by_harness THEN NOT said_true AND NOT said_false
                        ELSE coalesce(checks_pending, false) END AS pending,
       decided AND CASE WHEN people > 0 THEN coalesce(people_pass, false)
                        WHEN by_harness THEN said_true
                        ELSE coalesce(checks_pass_cond OR checks_pass_sure, false) END AS pass,
       decided AND CASE WHEN people > 0 THEN false
                        WHEN by_harness THEN said_true AND coalesce(checks_pass_cond, false)
                        ELSE coalesce(checks_pass_cond, false) END AS pass_cond,
       decided AND CASE WHEN people > 0 THEN coalesce(people_pass, false)
                        WHEN by_harness THEN said_true AND NOT coalesce(checks_pass_cond, false)
                        ELSE coalesce(checks_pass_sure, false) END AS pass_sure
FROM decided;

CREATE OR REPLACE VIEW evalconv_run_case_outcomes AS
SELECT case_id, run,
       CASE WHEN bool_or(fail) THEN 'failed' WHEN bool_or(pending) OR NOT bool_or(pass) THEN 'unscored'
            ELSE 'passed' END AS outcome,
       sum(excluded)::BIGINT AS excluded, count(*) AS attempts_with_verdicts
FROM evalconv_attempt_outcomes GROUP BY case_id, run;

CREATE OR REPLACE VIEW evalconv_case_outcomes AS
WITH per_case AS (
    SELECT case_id, bool_or(fail) AS fail, bool_or(pending) AS pending, bool_or(pass) AS pass,
           bool_or(pass_cond) AS pass_cond, bool_or(pass_sure) AS pass_sure, sum(excluded)::BIGINT AS excluded,
           sum(untyped)::BIGINT AS untyped, sum(conditional_results)::BIGINT AS conditional_results
    FROM evalconv_attempt_outcomes GROUP BY case_id
), attempts AS (
    SELECT case_id, count(*) AS attempts FROM evalconv_attempts WHERE case_id IS NOT NULL GROUP BY case_id
)
SELECT c.case_no, c.case_id, c.oracle_type, c.case_family, c.severity, c.starter, c.release_gate,
       CASE WHEN coalesce(p.fail, false) THEN 'failed'
            WHEN coalesce(p.pending, false) OR NOT coalesce(p.pass, false) THEN 'unscored' ELSE 'passed' END AS outcome,
       coalesce(p.excluded, 0) AS excluded, coalesce(a.attempts, 0) AS attempts,
       coalesce(p.untyped, 0) AS untyped_results, coalesce(p.conditional_results, 0) AS conditional_results,
       NOT coalesce(p.fail OR p.pending, false) AND coalesce(p.pass, false) AND coalesce(p.pass_cond, false)
           AND NOT coalesce(p.pass_sure, false) AS judge_only
FROM evalconv_cases c LEFT JOIN per_case p USING (case_id) LEFT JOIN attempts a USING (case_id);

CREATE OR REPLACE VIEW evalconv_pass_rate AS
SELECT count(*) AS cases,
       count(*) FILTER (WHERE outcome = 'passed') AS passed, count(*) FILTER (WHERE outcome = 'failed') AS failed,
       count(*) FILTER (WHERE outcome = 'unscored') AS unscored, coalesce(sum(excluded), 0)::BIGINT AS excluded,
       count(*) FILTER (WHERE outcome = 'passed')
           / nullif(count(*) FILTER (WHERE outcome IN ('passed', 'failed')), 0) AS pass_rate,
       count(*) FILTER (WHERE starter) AS starter, count(*) FILTER (WHERE judge_only) AS conditional
FROM evalconv_case_outcomes;

CREATE OR REPLACE VIEW evalconv_slice_pass_rates AS
SELECT s.slice, s.value,
       count(*) FILTER (WHERE outcome = 'passed') AS passed, count(*) FILTER (WHERE outcome = 'failed') AS failed,
       count(*) FILTER (WHERE outcome = 'unscored') AS unscored, sum(excluded)::BIGINT AS excluded,
       count(*) FILTER (WHERE outcome = 'passed')
           / nullif(count(*) FILTER (WHERE outcome IN ('passed', 'failed')), 0) AS pass_rate,
       count(*) FILTER (WHERE starter) AS starter, count(*) FILTER (WHERE judge_only) AS conditional
FROM evalconv_case_slices s JOIN evalconv_case_outcomes o USING (case_id)
GROUP BY s.slice, s.value;

CREATE OR REPLACE VIEW evalconv_pass_rate_by_harness_evaluator AS
SELECT harness, evaluator_type, count(*) AS verdicts,
       count(*) FILTER (WHERE admitted <> 'barred' AND passed) AS passed,
       count(*) FILTER (WHERE admitted <> 'barred' AND passed = false) AS failed,
       count(*) FILTER (WHERE admitted <> 'barred' AND passed IS NULL) AS unscored,
       count(*) FILTER (WHERE admitted = 'barred') AS excluded,
       count(*) FILTER (WHERE admitted <> 'barred' AND passed)
           / nullif(count(*) FILTER (WHERE admitted <> 'barred' AND passed IS NOT NULL), 0) AS pass_rate
FROM evalconv_verdicts GROUP BY harness, evaluator_type;

CREATE OR REPLACE VIEW evalconv_flags AS
SELECT count(*) FILTER (WHERE starter) AS starter_cases, coalesce(sum(excluded), 0)::BIGINT AS excluded_results,
       coalesce(sum(untyped_results), 0)::BIGINT AS untyped_results,
       coalesce(sum(conditional_results), 0)::BIGINT AS conditional_results,
       count(*) FILTER (WHERE judge_only) AS judge_only_cases, count(*) FILTER (WHERE attempts = 0) AS not_run
FROM evalconv_case_outcomes;

CREATE OR REPLACE MACRO evalconv_newly_failing(base_run, head_run) AS TABLE
SELECT head.case_id, c.severity, c.oracle_type, base.outcome AS base_outcome, head.outcome AS head_outcome
FROM evalconv_run_case_outcomes head
JOIN evalconv_run_case_outcomes base ON base.case_id = head.case_id AND base.run = base_run AND base.outcome = 'passed'
JOIN evalconv_cases c ON c.case_id = head.case_id
WHERE head.run = head_run AND head.outcome = 'failed'
ORDER BY c.case_no
"""
