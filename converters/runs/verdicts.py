"""The harness's own verdicts beside evalconv's reading: pass thresholds, evaluator typing, headlines.

- A harness that decides an attempt itself (promptfoo: threshold, weight, assert-set, a manual
  rating) gives a `role: verdict` result; that verdict decides the attempt, and its component
  results only exclude what the case's oracle bars (a case where a barred check sits inside the
  harness's verdict is named).
- A score with no pass rule of its own (`passAt` on the result) passes at the reader's default,
  or at `--threshold NAME=SCORE` (NAME a harness or a scorer; the scorer's wins); `passAt: null`
  (the harness states no rule and the reader sets none) is unscored until `--threshold` gives one.
- Every scorer's type and why it has it is kept for the report's typing table; a scorer whose
  type is unknown is a warning naming it and the flag that types it.
- A person's rating that the harness says overrides all other grading (`role: override`) counts
  as human-expert on a case whose oracle bars rubric-human but admits human-expert, and says so.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.errors import UsageError
from ..canonical.suggest import count as plural

NO_VERDICT = 0
_CODES = {True: 1, False: 2, None: 3}
_VERDICT = {1: True, 2: False, 3: None}
FLAG = "--evaluator"


def parse_thresholds(specs: Iterable[str]) -> dict[str, float]:
    """`--threshold braintrust=0.8` / `--threshold Levenshtein=0.9` -> {name: score}."""
    out = {}
    for spec in specs:
        name, eq, number = spec.rpartition("=")
        try:
            value = float(number)
        except ValueError:
            value = -1.0
        if not eq or not name or not 0.0 <= value <= 1.0:
            raise UsageError(f"--threshold '{spec}': expected NAME=SCORE with SCORE from 0 to 1, "
                             f"NAME a harness or a scorer (braintrust=0.8, Levenshtein=0.9)")
        out[name] = value
    return out


@dataclass
class Typing:
    type: str | None
    why: str
    harness: str | None
    results: int = 0
    scored: int = 0  # results with a pass or a fail: the ones an unknown type lets in unchecked


@dataclass
class HarnessVerdicts:
    thresholds: dict[str, float] = field(default_factory=dict)
    _codes: array = field(default_factory=lambda: array("B"))  # per attempt: its harness's verdict
    _harness_of: array = field(default_factory=lambda: array("B"))  # per attempt: index into harnesses
    harnesses: list[str] = field(default_factory=list)
    typing: dict[str, Typing] = field(default_factory=dict)
    notes: dict[int, list[str]] = field(default_factory=dict)  # case index -> why evalconv reads it otherwise
    used_thresholds: dict[str, float] = field(default_factory=dict)

    def add_attempt(self, record: Mapping[str, Any]) -> None:
        harness = given if isinstance(given := record.get("harness"), dict) else {}
        name = str(harness.get("name") or "unknown")
        if name not in self.harnesses:
            self.harnesses.append(name)
        self._harness_of.append(min(self.harnesses.index(name), 255))
        self._codes.append(NO_VERDICT)

    def harness(self, attempt: int) -> str:
        return self.harnesses[self._harness_of[attempt]]

    def set_verdict(self, attempt: int, passed: bool | None) -> None:
        self._codes[attempt] = _CODES[passed]

    def verdict(self, attempt: int) -> tuple[bool, bool | None]:
        """(has a harness verdict, the verdict: None when the harness erred)."""
        code = self._codes[attempt]
        return code != NO_VERDICT, _VERDICT.get(code)

    def passed(self, attempt: int, record: Mapping[str, Any], name: str, passed: bool | None) -> bool | None:
        """The verdict of a score with no pass rule of its own: the reader's, or at `--threshold`.
        `passAt: null` is a score the reader left unscored (no rule to apply) until `--threshold` gives one."""
        score, default = record.get("score"), record.get("passAt")
        if "passAt" not in record or not (default is None or isinstance(default, (int, float))) \
                or not isinstance(score, (int, float)) or isinstance(score, bool):
            return passed
        harness = self.harness(attempt)
        chosen = name if name in self.thresholds else harness if harness in self.thresholds else None
        if chosen is None:
            if default is not None:
                self.used_thresholds.setdefault(f"{harness} (default)", float(default))
            return passed
        self.used_thresholds[chosen] = self.thresholds[chosen]
        return score >= self.thresholds[chosen] if 0.0 <= score <= 1.0 else passed

    def type_of(self, attempt: int, name: str, evaluator: dict[str, Any], override: dict[str, str],
                scored: bool) -> str | None:
        """The type a result counts as, remembered with why for the typing table."""
        type_: str | None
        if name in override:
            type_, why = override[name], f"{FLAG} flag"
        else:
            type_ = evaluator.get("type")
            why = str(evaluator.get("typedBy") or ("inferred" if type_ else "default: unknown"))
        entry = self.typing.setdefault(name, Typing(type_, str(why), self.harness(attempt)))
        entry.results += 1
        entry.scored += scored
        return type_

    def person(self, case: int, oracle: str, type_: str | None, harness: str) -> str | None:
        """A harness's overriding human rating: human-expert where the oracle bars rubric-human only."""
        admits = ADMISSIBILITY[oracle]
        if type_ == "rubric-human" and admits.get("rubric-human", ("barred",))[0] == "barred" \
                and admits.get("human-expert", ("barred",))[0] != "barred":
            self.note(case, f"a person's rating in {harness} (overrides all other grading) counted as human-expert: "
                            f"{oracle} bars rubric-human and admits human-expert")
            return "human-expert"
        return type_

    def note(self, case: int, text: str) -> None:
        notes = self.notes.setdefault(case, [])
        if text not in notes:
            notes.append(text)

    def warnings(self) -> list[str]:
        return [f"{t.harness} scorer '{name}': evaluator type unknown ({plural(t.scored, 'verdict')} admitted unchecked); "
                f"set it with {FLAG} '{name}=TYPE'" for name, t in self.typing.items() if t.type is None and t.scored]

    def typing_json(self) -> list[dict[str, Any]]:
        return [{"scorer": name, "harness": t.harness, "type": t.type, "why": t.why, "results": t.results}
                for name, t in sorted(self.typing.items(), key=lambda item: (str(item[1].harness), item[0]))]

    def headlines(self, attempt_case: array, outcomes: list[str], excluded: list[int], case_ids: list[str],
                  overall: dict[str, Any]) -> dict[str, Any]:
        """Each harness's own headline from its verdicts, evalconv's, and why they differ, case by case."""
        tallies: dict[str, list[int]] = {}
        differences: list[dict[str, Any]] = []
        for attempt, code in enumerate(self._codes):
            if code == NO_VERDICT:
                continue
            harness = self.harness(attempt)
            tally = tallies.setdefault(harness, [0, 0, 0])
            tally[code - 1] += 1
            case = attempt_case[attempt]
            said = {1: "passed", 2: "failed", 3: "errored"}[code]
            if case < 0:
                differences.append({"harness": harness, "caseId": None, "harnessSays": said, "evalconv": None,
                                    "why": "ledger"})
                continue
            outcome = outcomes[case]
            if outcome != said:
                why = ("excluded" if excluded[case] else "unscored") if outcome == "unscored" else "reading"
                differences.append({"harness": harness, "caseId": case_ids[case], "harnessSays": said,
                                    "evalconv": outcome, "why": why, "notes": self.notes.get(case, [])})
        heads: list[dict[str, Any]] = []
        for harness, (passed, failed, errored) in tallies.items():
            total = passed + failed + errored
            rate = passed / total if total else None
            heads.append({"harness": harness, "successes": passed, "failures": failed, "errors": errored,
                          "passRate": rate,
                          "text": f"{harness} {rate * 100:.2f}% ({passed}/{total})" if rate is not None else
                          f"{harness} n/a (0/0)"})
        rate = overall["passRate"]
        mine = (f"evalconv {'n/a' if rate is None else f'{rate * 100:.1f}%'} ({overall['passed']} passed, "
                f"{overall['failed']} failed, {overall['unscored']} unscored)")
        reasons: dict[str, list[str]] = {}
        for diff in differences:
            reasons.setdefault(diff["why"], []).append(diff["caseId"] or "(no case)")
        why = "; ".join(f"{kind}: {', '.join(ids)}" for kind, ids in reasons.items())
        line = " vs ".join([*(str(h["text"]) for h in heads), mine]) + (f": {why}" if why else "")
        return {"harness": heads, "evalconv": mine, "differences": differences, "line": line if heads else None}

    def to_json(self, case_ids: list[str]) -> dict[str, Any]:
        return {"typing": self.typing_json(), "warnings": self.warnings(),
                "thresholds": dict(sorted(self.used_thresholds.items())),
                "caseNotes": [{"caseId": case_ids[c], "notes": n} for c, n in sorted(self.notes.items())]}
