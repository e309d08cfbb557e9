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
- Failures by name: per slice value, the first `CASES_SHOWN` failed and unscored cases (id, reason,
  severity, where the harness's output is, the deciding evaluator's message), and how many more.
- A gate over a slice fails when one of its cases is unscored (unless `allow_unscored` or
  `min_graded`), and counts a pass that rests only on a conditionally admitted evaluator (an
  llm-judge on a reference, set or rubric case) only where the judge agrees with people on the
  case family (`min_agreement`) or the user trusts it (`trust_judge`).
"""
from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from .attempt_table import AttemptTable
from ..canonical import paths, runs
from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.errors import UsageError
from ..canonical.suggest import count as plural
from ..canonical.slicing import lookup, slice_labels
from ..canonical.validator import Validator
from ..canonical.vocabulary import EVALUATOR_TYPES, HUMAN_TYPES, NONE_LABEL, is_release_gate, is_starter
from .gates import DEFAULT_POLICY, GatePolicy, gate_json
from .where import OutputPlaces
from .readers import RESULTS_REGISTRY, case_refs
from .verdicts import HarnessVerdicts
from ..sources import label, reading

DEFAULT_BY = ("metadata.severity", "metadata.reason", "case.caseFamily", "case.oracleType")
GATE_FIELD = "metadata.gate"
LEDGER_SHOWN = 1000
CASES_SHOWN = 20  # failed (and unscored) cases listed per slice value; the rest are counted
TEXT_CUT = 200  # characters kept of a case's reason and an evaluator's message
TYPES = (*EVALUATOR_TYPES, None)
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
        from ..coverage.slice_hints import did_you_mean

        raise UsageError(f"'{user_field}': slice by a case. or metadata. field{did_you_mean(user_field)}")
    return parts


@dataclass(slots=True)
class Case:
    id: str
    oracle: str
    family: str
    starter: bool
    gated: bool
    slices: dict[str, list[str]]
    reason: str | None = None
    severity: str | None = None
    fail: bool = False
    pending: bool = False
    passed: bool = False
    cond_pass: bool = False  # a conditionally admitted verdict (llm-judge) passed it
    sure_pass: bool = False  # an unconditionally admitted one did
    excluded: int = 0
    attempts: int = 0
    failed_by: tuple[int, int] | None = None  # (attempt, evaluator name) of the first failing verdict
    pending_by: tuple[int, int] | None = None
    by_judge: bool = False  # the verdict named by failed_by (else pending_by) is a conditionally admitted one

    @property
    def outcome(self) -> str:
        return "failed" if self.fail else "unscored" if self.pending or not self.passed else "passed"

    @property
    def judge_only(self) -> bool:
        """Passed, and only a conditionally admitted evaluator says so."""
        return self.outcome == "passed" and self.cond_pass and not self.sure_pass


@dataclass
class Bucket:
    passed: int = 0
    failed: int = 0
    unscored: int = 0
    excluded: int = 0
    starter: int = 0
    conditional: int = 0  # passed cases whose pass rests only on a conditionally admitted judge
    unvalidated: int = 0  # of those, the ones whose judge has no agreement with people to show
    listed: dict[str, list[int]] = field(default_factory=lambda: {"failed": [], "unscored": [], "unvalidated": []})

    def add(self, outcome: str, case: Case, index: int = -1, unvalidated: bool = False,
            shown: int | None = None) -> None:
        """Count a case; list it (by index) when it did not pass, the first `shown` of a kind (0: all)."""
        setattr(self, outcome, getattr(self, outcome) + 1)
        self.excluded += case.excluded
        self.starter += case.starter
        self.conditional += case.judge_only
        self.unvalidated += unvalidated
        kind = "unvalidated" if unvalidated else outcome
        if kind != "passed" and shown is not None and (shown == 0 or len(self.listed[kind]) < shown):
            self.listed[kind].append(index)

    @property
    def rate(self) -> float | None:
        scored = self.passed + self.failed
        return self.passed / scored if scored else None

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": self.failed, "unscored": self.unscored, "excluded": self.excluded,
                "passRate": self.rate, "starter": self.starter, "conditional": self.conditional}


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
    entries: list[Mapping[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, entry: Mapping[str, Any]) -> None:
        self.counts[entry["kind"]] = self.counts.get(entry["kind"], 0) + 1
        if len(self.entries) < LEDGER_SHOWN:
            self.entries.append(entry)



Verdict = tuple[int, "bool | None", bool]  # (evaluator name, verdict, conditionally admitted)


def _sorted_verdicts(case: Case, verdicts: Iterable[tuple[int, int]], names: list[str],
                     ) -> tuple[list[Verdict], list[Verdict], list[bool], list[str], tuple[int, int]]:
    """An attempt's verdicts sorted by the admissibility map: a person's, the machines', the
    judges' pass/fail, the barred checks (named), and (untyped, conditional) verdict counts."""
    human: list[Verdict] = []
    machine: list[Verdict] = []
    judged: list[bool] = []
    barred: list[str] = []
    untyped = conditional = 0
    for name, code in verdicts:
        type_, passed = TYPES[code // 3], (False, True, None)[code % 3]
        status = ADMISSIBILITY[case.oracle].get(type_, ("barred",))[0] if type_ is not None else "ok"
        if type_ is None:
            untyped += passed is not None  # a verdict nobody can check against the map
        elif status == "barred":
            case.excluded += 1
            barred.append(f"{names[name]} ({type_})")
            continue
        conditional += status == "cond"
        if type_ in HUMAN_TYPES and passed is not None:
            human.append((name, passed, False))
        else:
            machine.append((name, passed, status == "cond"))
            if type_ == "llm-judge" and passed is not None:
                judged.append(passed)
    return human, machine, judged, barred, (untyped, conditional)

class RunReport:
    """Feed it cases, then records (attempts before their results); `finish()` gives the dict."""

    def __init__(self, by: Iterable[str] = DEFAULT_BY, evaluators: dict[str, str] | None = None,
                 gates: Iterable[Gate] = (), gate_field: str = GATE_FIELD, policy: GatePolicy = DEFAULT_POLICY,
                 cases_shown: int = CASES_SHOWN, thresholds: dict[str, float] | None = None) -> None:
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
        # caseRef kinds a harness spells itself (a LangSmith example id): kind -> (spell, spelled id -> case)
        self._refs: dict[str, tuple[Callable[[str], str], dict[str, int]]] = {
            kind: (spell, {}) for reader in RESULTS_REGISTRY.readers.values()
                      for kind, spell in case_refs(reader).items()}
        self._inputs: dict[str, int] = {}  # runs.input_key -> case index, -1 when two cases share it
        self._attempt_index = AttemptTable()
        self._attempt_case = array("i")  # case index per attempt, -1: unlinked
        self._names: dict[str, int] = {}
        self._verdicts = _Verdicts()
        self._harness = HarnessVerdicts(dict(thresholds or {}))
        self.results = 0
        self.ledger = Ledger()
        self._gate_slices: dict[int, dict[str, list[str]]] = {}
        self.policy = policy
        self.cases_shown = cases_shown
        self._messages: dict[tuple[int, int], str] = {}  # (case, name) -> its latest message of a verdict not passed
        self._verdict_names: dict[str, int] = {}  # harness -> the name its own verdict results go by
        self._where = OutputPlaces()
        self._texts: dict[str, str] = {}
        self._name_list: list[str] = []  # evaluator names by number, for the failure lists

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
        metadata = value["metadata"]
        self.cases.append(Case(
            id=value["id"], oracle=case["oracleType"], family=case.get("caseFamily") or NONE_LABEL,
            starter=is_starter(case), gated=is_release_gate(lookup(value, self._gate_path)),
            slices={name: slice_labels(lookup(value, p)) for name, p in zip(self.by, self._by_paths)},
            reason=_text(metadata.get("reason")), severity=_text(metadata.get("severity"))))
        self._gate_slices[index] = {name: slice_labels(lookup(value, p)) for name, p in self._gate_fields.items()}
        self._case_index[value["id"]] = index
        for spell, cases in self._refs.values():
            cases[spell(value["id"])] = index
        if (key := runs.input_key(value.get("input"))) is not None:
            self._inputs[key] = -1 if key in self._inputs else index

    # ---- runs
    def add_records(self, records: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        for kind, record in records:
            if kind == "attempt":
                self._attempt(record)
            elif kind == "result":
                self._result(record)
            else:
                # a stored entry as read (not checked again: any value may be missing), in the
                # keys of a LedgerEntry, not the store's
                self.ledger.add({key: record.get(key) for key in runs.LedgerEntry.__annotations__}
                                | {"kind": record.get("kind", "unreadable")})

    def _resolve(self, record: Mapping[str, Any]) -> int:
        case_id = record.get("caseId")
        if isinstance(case_id, str) and case_id in self._case_index:
            return self._case_index[case_id]
        ref = given if isinstance(given := record.get("caseRef"), dict) else {}
        value = ref.get("value")
        if not isinstance(value, str):
            return -1
        kind = ref.get("kind")
        if isinstance(kind, str) and kind in self._refs:
            return self._refs[kind][1].get(value, -1)
        if ref.get("kind") == "input":
            return self._inputs.get(runs.input_key(value) or "", -1)
        if ref.get("kind") == "name":
            return self._case_index.get(value, -1)
        return -1

    def _attempt(self, record: Mapping[str, Any]) -> None:
        attempt_id = record.get("id")
        if not isinstance(attempt_id, str) or attempt_id in self._attempt_index:
            return  # the same run given twice: an attempt is counted once
        case = self._resolve(record)
        self._attempt_index.add(attempt_id)  # numbered in order, as _attempt_case
        self._attempt_case.append(case)
        self._verdicts.grow()
        self._where.add(record)
        self._harness.add_attempt(record)
        if case < 0:
            wanted = record.get("caseId") or (record.get("caseRef") or {}).get("value")
            why = (f"no case '{wanted}' in the case set" if wanted else
                   "the run output does not say which case this is (no evalconv metadata, no name)")
            self.ledger.add(runs.ledger_entry("attempt-without-case", why, id=attempt_id, ref=wanted,
                                              source=record.get("source")))
        else:
            self.cases[case].attempts += 1

    def _result(self, record: Mapping[str, Any]) -> None:
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
        passed = record.get("passed") if isinstance(record.get("passed"), bool) else None
        if record.get("role") == "verdict":  # the harness's own verdict on the attempt
            self._harness.set_verdict(attempt, passed)
            name_index = self._names.setdefault(name, len(self._names))
            self._verdict_names.setdefault(self._harness.harness(attempt), name_index)
            self._note(attempt, name_index, passed, record.get("reason"))
            return
        type_ = self._harness.type_of(attempt, name, evaluator, self._override, passed is not None)
        case = self._attempt_case[attempt]
        if record.get("role") == "override" and name not in self._override and case >= 0:
            type_ = self._harness.person(case, self.cases[case].oracle, type_, self._harness.harness(attempt))
        passed = self._harness.passed(attempt, record, name, passed)
        code = (TYPES.index(type_) if type_ in TYPES else len(TYPES) - 1) * 3 + _PASSED[passed]
        name_index = self._names.setdefault(name, len(self._names))
        self._verdicts.set(attempt, name_index, code)  # newer supersedes older
        self._note(attempt, name_index, passed, record.get("reason"))

    def _note(self, attempt: int, name: int, passed: bool | None, reason: Any) -> None:
        """Keep an evaluator's latest message on a case where it did not pass (what a failure list
        shows): one a case and evaluator, however many attempts and rescorings there are."""
        case = self._attempt_case[attempt]
        if passed is not True and case >= 0:
            text = _text(reason) or ("failed" if passed is False else "no verdict")
            self._messages[(case, name)] = self._texts.setdefault(text, text)  # one copy of a repeated message

    # ---- the report
    def _buckets(self, validated: set[str]) -> tuple[Bucket, dict[str, dict[str, Bucket]], list[Bucket], list[Any]]:
        """Every case's outcome counted overall, in each slice, and in each gate's bucket."""
        shown = self.cases_shown
        overall = Bucket()
        slices: dict[str, dict[str, Bucket]] = {name: {} for name in self.by}
        gate_buckets = [Bucket() for _ in self._gates]
        outcomes = []
        for index, case in enumerate(self.cases):
            outcome = case.outcome
            outcomes.append(outcome)
            overall.add(outcome, case)
            for slice_name, values in case.slices.items():
                for value in values:
                    slices[slice_name].setdefault(value, Bucket()).add(outcome, case, index, shown=shown)
            if case.gated:
                unvalidated = case.judge_only and case.family not in validated
                for gate, bucket in zip(self._gates, gate_buckets):
                    if gate.field == "overall" or gate.value in self._gate_slices[index][gate.field]:
                        bucket.add(outcome, case, index, unvalidated, shown=shown)
        return overall, slices, gate_buckets, outcomes

    def _decide_attempts(self) -> tuple[int, int, dict[str, list[int]]]:
        """Decide every linked attempt from its verdicts: (verdicts of no evaluator type, verdicts
        of conditionally admitted ones, the judge-against-human 2x2 table per case family)."""
        untyped = conditional = 0
        agreement: dict[str, list[int]] = {}
        names = list(self._names)
        for attempt, verdicts in self._verdicts.by_attempt():  # one attempt at a time: nothing kept per attempt
            case_index = self._attempt_case[attempt]
            if case_index < 0:
                continue
            case = self.cases[case_index]
            human, machine, judged, barred, counts = _sorted_verdicts(case, verdicts, names)
            untyped, conditional = untyped + counts[0], conditional + counts[1]
            if not human and not machine:
                continue
            self._decide(case, attempt, self._deciding(case, case_index, attempt, human, machine, barred))
            if judged and human:
                table = agreement.setdefault(case.family, [0, 0, 0, 0])
                for by_judge in judged:
                    for _name, by_human, _cond in human:
                        table[(0 if by_judge else 1) * 2 + (0 if by_human else 1)] += 1
        return untyped, conditional, agreement

    def _deciding(self, case: Case, case_index: int, attempt: int, human: list[Verdict], machine: list[Verdict],
                  barred: list[str]) -> list[Verdict]:
        """The verdicts that decide an attempt. A person's admitted verdict decides it
        (promptfoo's manual rating overrides its assertions the same way); else the harness's
        own verdict does, when it has one and no admitted check is pending; else the machines'
        verdicts do."""
        has_verdict, said = self._harness.verdict(attempt)
        if not (has_verdict and not human and all(passed is not None for _, passed, _ in machine)):
            return human or machine
        harness = self._harness.harness(attempt)
        # a pass resting on a conditionally admitted judge is still the judge's pass
        cond = said is True and any(c and passed is True for _, passed, c in machine)
        if barred:
            admitted = {passed for _, passed, _ in machine}
            self._harness.note(case_index, (
                f"{harness} {'passed' if said else 'failed'} it with {'a check' if len(barred) == 1 else 'checks'} "
                f"{case.oracle} bars inside: {', '.join(barred)}; the admitted checks alone: "
                f"{'passed' if admitted == {True} else 'failed' if False in admitted else 'mixed'}"))
        return [(self._verdict_names.get(harness, machine[0][0]), said, cond)]

    def finish(self, sources: list[str] | None = None) -> dict[str, Any]:
        untyped, conditional, agreement = self._decide_attempts()
        judges = _agreement(agreement)
        validated = {f for f, a in judges.items() if a["percentAgreement"] >= self.policy.min_agreement}
        shown = self.cases_shown
        overall, slices, gate_buckets, outcomes = self._buckets(validated)
        ordered = {name: _worst_first(name, buckets) for name, buckets in slices.items()}
        return {
            "cases": len(self.cases), "attempts": len(self._attempt_case), "results": self.results,
            "sources": sources or [],
            "overall": overall.to_json(),
            "slices": {name: {v: b.to_json() for v, b in buckets} for name, buckets in ordered.items()},
            "failures": {name: {v: self._listing(b) for v, b in buckets if b.failed or b.unscored}
                         for name, buckets in ordered.items()},
            "casesShown": shown,
            "flags": {"starterCases": sum(c.starter for c in self.cases),
                      "excludedResults": sum(c.excluded for c in self.cases),
                      "untypedResults": untyped,
                      "conditionalResults": conditional,
                      "judgeOnlyCases": sum(c.judge_only for c in self.cases),
                      "notRun": sum(1 for c in self.cases if c.attempts == 0)},
            "judgeAgreement": judges,
            "headline": self._harness.headlines(self._attempt_case, outcomes, [c.excluded for c in self.cases],
                                                [c.id for c in self.cases], overall.to_json()),
            "verdicts": self._harness.to_json([c.id for c in self.cases]),
            "gates": [self._gate_json(g, b, judges) for g, b in zip(self._gates, gate_buckets)],
            "ledger": self.ledger.entries,
            "ledgerCounts": dict(sorted(self.ledger.counts.items())),
        }

    def _decide(self, case: Case, attempt: int, decided: list[tuple[int, bool | None, bool]]) -> None:
        for name, passed, cond in decided:
            if passed is False:
                if case.failed_by is None:
                    case.failed_by, case.by_judge = (attempt, name), cond
                case.fail = True
            elif passed is None:
                if case.pending_by is None and case.failed_by is None:
                    case.pending_by, case.by_judge = (attempt, name), cond
                case.pending = True
            else:
                case.passed = True
                case.cond_pass |= cond
                case.sure_pass |= not cond

    def _named(self, index: int) -> dict[str, Any]:
        """A failed or unscored case by name: what triage needs to find and read it."""
        case = self.cases[index]
        by = case.failed_by if case.fail else case.pending_by
        if len(self._name_list) != len(self._names):
            self._name_list = list(self._names)
        if by is not None:
            message = self._messages.get((index, by[1]))
            evaluator: str | None = self._name_list[by[1]]
            where = self._where.ref(by[0])
        else:
            evaluator = where = None
            message = ("not run: no attempt in these runs" if case.attempts == 0 else
                       f"no admitted verdict ({plural(case.excluded, 'result')} excluded: their evaluator is barred here)"
                       if case.excluded else "no verdict on any attempt")
        return {"id": case.id, "outcome": case.outcome, "reason": case.reason, "severity": case.severity,
                "outputRef": where, "evaluator": evaluator, "conditional": by is not None and case.by_judge,
                "message": message}

    def _listing(self, bucket: Bucket) -> dict[str, Any]:
        listed = bucket.listed
        return {"failed": [self._named(i) for i in listed["failed"]],
                "unscored": [self._named(i) for i in listed["unscored"]],
                "failedNotShown": bucket.failed - len(listed["failed"]),
                "unscoredNotShown": bucket.unscored - len(listed["unscored"])}

    def _gate_json(self, gate: Gate, bucket: Bucket, judges: dict[str, Any]) -> dict[str, Any]:
        listed = bucket.listed
        return gate_json("overall" if gate.field == "overall" else f"{gate.field}={gate.value}", gate.threshold,
                         self.policy, bucket.to_json(), gate_field=self.gate_field, judges=judges,
                         unvalidated=bucket.unvalidated, unscored=[self.cases[i].id for i in listed["unscored"]],
                         judge_only=[(self.cases[i].id, self.cases[i].family) for i in listed["unvalidated"]])


def _text(value: Any) -> str | None:
    """A message or reason as one line, cut at TEXT_CUT characters; None for no text."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(value.split())
    return value if len(value) <= TEXT_CUT else value[: TEXT_CUT - 1] + "…"


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


def run_records(path: str, harness: str | None = None) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The records of one RUN argument: a run store folder or a harness's own output file."""
    from .store import is_store, read_records

    if os.path.isdir(path):
        if not is_store(path):
            raise UsageError("a folder given as a run must be a run store (attempts.jsonl, results.jsonl)", source=path)
        return read_records(path)
    return RESULTS_REGISTRY.read(path, harness)


def report(runs_: list[str], cases: list[str], *, by: Iterable[str] | None = None,
           evaluators: dict[str, str] | None = None, gates: Iterable[str] = (), gate_field: str = GATE_FIELD,
           harness: str | None = None, policy: GatePolicy = DEFAULT_POLICY,
           cases_shown: int = CASES_SHOWN, thresholds: dict[str, float] | None = None) -> dict[str, Any]:
    """The report dict `evalconv report --format json` prints."""
    builder = RunReport(by or DEFAULT_BY, evaluators, [Gate.parse(g) for g in gates], gate_field, policy, cases_shown,
                        thresholds)
    for path in cases:
        builder.add_cases(path)
    for path in runs_:
        builder.add_records(run_records(path, harness))
    result = builder.finish([label(p) for p in runs_])
    if by:  # a --by typo: exit 2 with the closest field, not a slice of (none)
        from ..coverage.slice_hints import refuse_unmatched

        refuse_unmatched(by, result["slices"], cases)
    return result
