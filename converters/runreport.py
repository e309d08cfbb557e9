"""`evalconv report`: pass rates of runs against their cases, overall and sliced, worst first.

Streams: the cases are read once into a small table, then every attempt and result is read once;
per attempt it keeps a few machine words (`AttemptTable`, its case, its packed verdicts) and no
Python object, and nothing per result record or rescoring.

The rules (docs/runs.md says them to users):
- A case is counted once. Its verdicts are the newest result of each evaluator on each of its
  attempts (a rescoring supersedes; the store keeps both). Where a person (rubric-human,
  human-expert) gave an admitted verdict on an attempt, the people's verdicts decide that attempt.
  A result whose evaluator the case's oracle type bars is excluded (counted, never in a rate: the
  mixing problem).
- failed: some admitted verdict failed. unscored: none failed, and some admitted verdict is
  pending or errored, or there is no admitted verdict at all (not run, human grading not done).
  passed: otherwise. passRate = passed / (passed + failed), null when nothing was scored.
- A result without its attempt, an attempt without its case, an unreadable record and an invalid
  case go to the ledger, with the reason; the report counts them.
"""
from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .attempttable import AttemptTable
from .canonical import jsonvalue, paths, runs
from .canonical.admissibility import ADMISSIBILITY
from .canonical.errors import UsageError
from .canonical.validator import Validator
from .sources import label, reading
from .vendors.langsmith.format import example_id

DEFAULT_BY = ("metadata.severity", "metadata.reason", "case.caseFamily", "case.oracleType")
GATE_FIELD = "metadata.gate"
GATE_VALUE = "release"
STARTERS = ("starter-example", "overlay-starter-needs-expert-validation")
NONE_VALUE = "(none)"
LEDGER_SHOWN = 1000
TYPES = ("exact-or-programmatic", "rubric-human", "llm-judge", "pairwise-preference",
         "trajectory-or-state-check", "human-expert", None)
_PASSED = {False: 0, True: 1, None: 2}


def field_path(user_field: str) -> list[str | int]:
    """`case.X` (short for metadata.case.X), `metadata.X` or a `$.` path -> path parts."""
    text = user_field[2:] if user_field.startswith("$.") else user_field
    if text.startswith("case."):
        text = "metadata." + text
    try:
        parts = paths.parse(paths.normalize(text))
    except ValueError:
        raise UsageError(f"'{user_field}' is not a field path (case.FIELD or metadata.KEY)") from None
    if not parts or parts[0] not in ("metadata", "id"):
        raise UsageError(f"'{user_field}': slice by a case. or metadata. field")
    return parts


def _lookup(value: Any, parts: list[str | int]) -> Any:
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return None
        elif not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def slice_values(value: Any) -> list[str]:
    """The slice(s) a field value puts a case in: each item of a list, text as it is, else JSON."""
    if value is None or value == [] or value == "":
        return [NONE_VALUE]
    if isinstance(value, list):
        return list(dict.fromkeys(v if isinstance(v, str) else jsonvalue.dumps(v) for v in value))
    return [value if isinstance(value, str) else jsonvalue.dumps(value)]


@dataclass(slots=True)
class Case:
    id: str
    oracle: str
    family: str
    starter: bool
    gated: bool
    slices: dict[str, list[str]]
    fail: bool = False
    pending: bool = False
    passed: bool = False
    excluded: int = 0
    attempts: int = 0


@dataclass
class Bucket:
    passed: int = 0
    failed: int = 0
    unscored: int = 0
    excluded: int = 0
    starter: int = 0

    def add(self, outcome: str, case: Case) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        self.excluded += case.excluded
        self.starter += case.starter

    @property
    def rate(self) -> float | None:
        scored = self.passed + self.failed
        return self.passed / scored if scored else None

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": self.failed, "unscored": self.unscored, "excluded": self.excluded,
                "passRate": self.rate, "starter": self.starter}


@dataclass
class Gate:
    field: str
    value: str
    threshold: float

    @classmethod
    def parse(cls, spec: str) -> "Gate":
        """`metadata.severity=harmful:1.0`, or `overall:0.95`."""
        target, sep, rate = spec.rpartition(":")
        try:
            threshold = float(rate)
        except ValueError:
            threshold = -1.0
        if not sep or not 0.0 <= threshold <= 1.0:
            raise UsageError(f"--fail-under '{spec}': expected FIELD=VALUE:RATE or overall:RATE, RATE from 0 to 1")
        if target == "overall":
            return cls("overall", "", threshold)
        name, eq, value = target.partition("=")
        if not eq or not value:
            raise UsageError(f"--fail-under '{spec}': expected FIELD=VALUE:RATE (metadata.severity=harmful:1.0)")
        field_path(name)
        return cls(name, value, threshold)


@dataclass
class Ledger:
    entries: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, entry: dict[str, Any]) -> None:
        self.counts[entry["kind"]] = self.counts.get(entry["kind"], 0) + 1
        if len(self.entries) < LEDGER_SHOWN:
            self.entries.append(entry)


class RunReport:
    """Feed it cases, then records (attempts before their results); `finish()` gives the dict."""

    def __init__(self, by: Iterable[str] = DEFAULT_BY, evaluators: dict[str, str] | None = None,
                 gates: Iterable[Gate] = (), gate_field: str = GATE_FIELD) -> None:
        self.by = list(dict.fromkeys(by))
        self._by_paths = [field_path(f) for f in self.by]
        self._gates = list(gates)
        self._gate_fields = {g.field: field_path(g.field) for g in self._gates if g.field != "overall"}
        self._gate_path = field_path(gate_field)
        self.gate_field = gate_field
        for type_ in (evaluators or {}).values():
            if type_ not in TYPES:
                raise UsageError(f"--evaluator: '{type_}' is not an evaluator type; one of: {', '.join(TYPES[:-1])}")
        self._override = dict(evaluators or {})
        self.cases: list[Case] = []
        self._case_index: dict[str, int] = {}
        self._langsmith: dict[str, int] = {}
        self._inputs: dict[str, int] = {}  # runs.input_key -> case index, -1 when two cases share it
        self._attempt_index = AttemptTable()
        self._attempt_case = array("i")  # case index per attempt, -1: unlinked
        self._names: dict[str, int] = {}
        self._verdicts = _Verdicts()
        self.results = 0
        self.ledger = Ledger()
        self._gate_slices: dict[int, dict[str, list[str]]] = {}

    # ---- cases
    def add_cases(self, path: str) -> None:
        with reading(path) as (_fmt, rows, _report):
            for checked in Validator(source=label(path)).check_all(rows):
                if checked.row is None:
                    first = checked.errors[0]
                    self.ledger.add(runs.ledger_entry("invalid-case", first.message, id=first.id,
                                                      source={"file": label(path), "line": first.line, "entry": first.row}))
                    continue
                self._add_case(checked.row.to_json())

    def _add_case(self, value: dict[str, Any]) -> None:
        case = value["metadata"]["case"]
        if value["id"] in self._case_index:
            self.ledger.add(runs.ledger_entry("duplicate-case", "a case with this id was already read; the first counts",
                                              id=value["id"]))
            return
        index = len(self.cases)
        self.cases.append(Case(
            id=value["id"], oracle=case["oracleType"], family=case.get("caseFamily") or NONE_VALUE,
            starter=case["provenance"] in STARTERS, gated=_lookup(value, self._gate_path) == GATE_VALUE,
            slices={name: slice_values(_lookup(value, p)) for name, p in zip(self.by, self._by_paths)}))
        self._gate_slices[index] = {name: slice_values(_lookup(value, p)) for name, p in self._gate_fields.items()}
        self._case_index[value["id"]] = index
        self._langsmith[example_id(value["id"])] = index
        if (key := runs.input_key(value.get("input"))) is not None:
            self._inputs[key] = -1 if key in self._inputs else index

    # ---- runs
    def add_records(self, records: Iterable[tuple[str, dict[str, Any]]]) -> None:
        for kind, record in records:
            if kind == "attempt":
                self._attempt(record)
            elif kind == "result":
                self._result(record)
            else:
                self.ledger.add({"kind": record.get("kind", "unreadable"), "id": record.get("id"),
                                 "ref": record.get("ref"), "reason": record.get("reason"), "source": record.get("source")})

    def _resolve(self, record: dict[str, Any]) -> int:
        case_id = record.get("caseId")
        if isinstance(case_id, str) and case_id in self._case_index:
            return self._case_index[case_id]
        ref = given if isinstance(given := record.get("caseRef"), dict) else {}
        value = ref.get("value")
        if not isinstance(value, str):
            return -1
        if ref.get("kind") == "langsmith-example-id":
            return self._langsmith.get(value, -1)
        if ref.get("kind") == "input":
            return self._inputs.get(runs.input_key(value) or "", -1)
        if ref.get("kind") == "name":
            return self._case_index.get(value, -1)
        return -1

    def _attempt(self, record: dict[str, Any]) -> None:
        attempt_id = record.get("id")
        if not isinstance(attempt_id, str) or attempt_id in self._attempt_index:
            return  # the same run given twice: an attempt is counted once
        case = self._resolve(record)
        self._attempt_index.add(attempt_id)  # numbered in order, as _attempt_case
        self._attempt_case.append(case)
        self._verdicts.grow()
        if case < 0:
            wanted = record.get("caseId") or (record.get("caseRef") or {}).get("value")
            why = (f"no case '{wanted}' in the case set" if wanted else
                   "the run output does not say which case this is (no evalconv metadata, no name)")
            self.ledger.add(runs.ledger_entry("attempt-without-case", why, id=attempt_id, ref=wanted,
                                              source=record.get("source")))
        else:
            self.cases[case].attempts += 1

    def _result(self, record: dict[str, Any]) -> None:
        self.results += 1
        attempt_ref = record.get("attemptId")
        attempt = self._attempt_index.get(attempt_ref) if isinstance(attempt_ref, str) else None
        if attempt is None:
            self.ledger.add(runs.ledger_entry("result-without-attempt",
                                              f"no attempt '{record.get('attemptId')}' in the runs given",
                                              id=record.get("id"), ref=record.get("attemptId"), source=record.get("source")))
            return
        evaluator = given if isinstance(given := record.get("evaluator"), dict) else {}
        name = str(evaluator.get("name"))
        type_ = self._override.get(name, evaluator.get("type"))
        passed = record.get("passed") if isinstance(record.get("passed"), bool) else None
        code = (TYPES.index(type_) if type_ in TYPES else len(TYPES) - 1) * 3 + _PASSED[passed]
        name_index = self._names.setdefault(name, len(self._names))
        self._verdicts.set(attempt, name_index, code)  # newer supersedes older

    # ---- the report
    def finish(self, sources: list[str] | None = None) -> dict[str, Any]:
        untyped = 0
        agreement: dict[str, list[int]] = {}  # per case family: the judge-against-human 2x2 table
        for attempt, verdicts in self._verdicts.by_attempt():  # one attempt at a time: nothing kept per attempt
            case_index = self._attempt_case[attempt]
            if case_index < 0:
                continue
            case = self.cases[case_index]
            human: list[bool] = []
            machine: set[bool | None] = set()
            judged: list[bool] = []
            for _name, code in verdicts:
                type_, passed = TYPES[code // 3], (False, True, None)[code % 3]
                if type_ is None:
                    untyped += passed is not None  # a verdict nobody can check against the map
                elif ADMISSIBILITY[case.oracle].get(type_, ("barred",))[0] == "barred":
                    case.excluded += 1
                    continue
                if type_ in runs.HUMAN_TYPES and passed is not None:
                    human.append(passed)
                else:
                    machine.add(passed)
                    if type_ == "llm-judge" and passed is not None:
                        judged.append(passed)
            if not human and not machine:
                continue
            # A person's admitted verdict on an attempt decides it (promptfoo's manual rating
            # overrides its assertions the same way); else the machines' verdicts do.
            decided = set(human) if human else machine
            case.fail |= False in decided
            case.pending |= None in decided
            case.passed |= True in decided
            if judged and human:
                table = agreement.setdefault(case.family, [0, 0, 0, 0])
                for by_judge in judged:
                    for by_human in human:
                        table[(0 if by_judge else 1) * 2 + (0 if by_human else 1)] += 1
        overall = Bucket()
        slices: dict[str, dict[str, Bucket]] = {name: {} for name in self.by}
        gate_buckets = [Bucket() for _ in self._gates]
        for index, case in enumerate(self.cases):
            outcome = "failed" if case.fail else "unscored" if case.pending or not case.passed else "passed"
            overall.add(outcome, case)
            for slice_name, values in case.slices.items():
                for value in values:
                    slices[slice_name].setdefault(value, Bucket()).add(outcome, case)
            if case.gated:
                for gate, bucket in zip(self._gates, gate_buckets):
                    if gate.field == "overall" or gate.value in self._gate_slices[index][gate.field]:
                        bucket.add(outcome, case)
        return {
            "cases": len(self.cases), "attempts": len(self._attempt_case), "results": self.results,
            "sources": sources or [],
            "overall": overall.to_json(),
            "slices": {name: {v: b.to_json() for v, b in _worst_first(name, buckets)} for name, buckets in slices.items()},
            "flags": {"starterCases": sum(c.starter for c in self.cases),
                      "excludedResults": sum(c.excluded for c in self.cases),
                      "untypedResults": untyped,
                      "notRun": sum(1 for c in self.cases if c.attempts == 0)},
            "judgeAgreement": _agreement(agreement),
            "gates": [_gate_json(g, b, self.gate_field) for g, b in zip(self._gates, gate_buckets)],
            "ledger": self.ledger.entries,
            "ledgerCounts": dict(sorted(self.ledger.counts.items())),
        }


class _Verdicts:
    """The newest verdict of each evaluator on each attempt, packed: five bits per evaluator name
    in one 64-bit word per attempt for the first twelve names, a dict for any others. This is
    what keeps a report over millions of results small: one word per attempt."""

    SLOTS, BITS = 12, 5

    def __init__(self) -> None:
        self._packed = array("Q")
        self._more: dict[int, dict[int, int]] = {}  # attempt -> {name: code} past the packed names

    def grow(self) -> None:
        self._packed.append(0)

    def set(self, attempt: int, name: int, code: int) -> None:
        if name < self.SLOTS:
            shift = name * self.BITS
            word = self._packed[attempt] & ~(31 << shift)
            self._packed[attempt] = word | ((code + 1) << shift)  # 0: no verdict
        else:
            self._more.setdefault(attempt, {})[name] = code

    def by_attempt(self) -> Iterator[tuple[int, list[tuple[int, int]]]]:
        """(attempt, [(name, code), ...]) for each attempt with a verdict, in attempt order."""
        for attempt, word in enumerate(self._packed):
            verdicts = []
            name = 0
            while word:
                if word & 31:
                    verdicts.append((name, (word & 31) - 1))
                word >>= self.BITS
                name += 1
            if attempt in self._more:
                verdicts += self._more[attempt].items()
            if verdicts:
                yield attempt, verdicts

    def items(self) -> Iterator[tuple[int, int, int]]:
        for attempt, verdicts in self.by_attempt():
            for name, code in verdicts:
                yield attempt, name, code


def _worst_first(name: str, buckets: dict[str, Bucket]) -> list[tuple[str, Bucket]]:
    """Lowest pass rate first (nothing scored last), then the worse severity, then more failures."""
    severity = name in ("metadata.severity", "$.metadata.severity")

    def key(item: tuple[str, Bucket]) -> tuple[Any, ...]:
        value, bucket = item
        rate = bucket.rate
        return (rate is None, rate if rate is not None else 0.0,
                -runs.severity_rank(value) if severity else 0, -bucket.failed, value)
    return sorted(buckets.items(), key=key)


def _gate_json(gate: Gate, bucket: Bucket, gate_field: str) -> dict[str, Any]:
    rate = bucket.rate
    slice_ = "overall" if gate.field == "overall" else f"{gate.field}={gate.value}"
    ok = rate is not None and rate >= gate.threshold
    why = (f"{rate:.4g} >= {gate.threshold:g}" if ok else
           f"{rate:.4g} < {gate.threshold:g}" if rate is not None else
           f"no scored case with {gate_field}={GATE_VALUE} in this slice")
    return {"slice": slice_, "threshold": gate.threshold, "counting": f"{gate_field}={GATE_VALUE}",
            **bucket.to_json(), "ok": ok, "why": why}


def kappa(both_pass: int, both_fail: int, judge_only: int, human_only: int) -> float | None:
    """Cohen's kappa for two raters on pass/fail; None when chance agreement is 1 (undefined)."""
    n = both_pass + both_fail + judge_only + human_only
    if n == 0:
        return None
    observed = (both_pass + both_fail) / n
    judge_pass = (both_pass + judge_only) / n
    human_pass = (both_pass + human_only) / n
    chance = judge_pass * human_pass + (1 - judge_pass) * (1 - human_pass)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def _agreement(tables: dict[str, list[int]]) -> dict[str, Any]:
    """Per case family: every llm-judge verdict paired with every human verdict on the same attempt."""
    out = {}
    for family in sorted(tables):
        both_pass, judge_pass_human_fail, judge_fail_human_pass, both_fail = tables[family]
        n = sum(tables[family])
        out[family] = {"pairs": n, "agree": both_pass + both_fail,
                       "percentAgreement": (both_pass + both_fail) / n,
                       "kappa": kappa(both_pass, both_fail, judge_pass_human_fail, judge_fail_human_pass),
                       "bothPass": both_pass, "bothFail": both_fail, "judgePassHumanFail": judge_pass_human_fail,
                       "judgeFailHumanPass": judge_fail_human_pass}
    return out


def run_records(path: str, harness: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The records of one RUN argument: a run store folder or a harness's own output file."""
    from .results_registry import RESULTS_REGISTRY
    from .runstore import is_store, read_records

    if os.path.isdir(path):
        if not is_store(path):
            raise UsageError("a folder given as a run must be a run store (attempts.jsonl, results.jsonl)", source=path)
        return read_records(path)
    return RESULTS_REGISTRY.read(path, harness)


def report(runs_: list[str], cases: list[str], *, by: Iterable[str] | None = None,
           evaluators: dict[str, str] | None = None, gates: Iterable[str] = (), gate_field: str = GATE_FIELD,
           harness: str | None = None) -> dict[str, Any]:
    """The report dict `evalconv report --format json` prints."""
    builder = RunReport(by or DEFAULT_BY, evaluators, [Gate.parse(g) for g in gates], gate_field)
    for path in cases:
        builder.add_cases(path)
    for path in runs_:
        builder.add_records(run_records(path, harness))
    return builder.finish([label(p) for p in runs_])
