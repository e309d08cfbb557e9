"""Generate N realistic, valid canonical rows as JSONL, deterministically from a seed.

    python bench/generate.py 100000 -o bench/out/rows-100000.jsonl [--seed 8]

The rows look like a support-agent golden set grown large: all six oracle types, string and
`{"messages": [...]}` inputs, variable dicts, tool-call arrays, list fields, extra metadata keys,
unique ids, and case families whose rows agree on the oracle type and the evaluator (so the set
validates). A few rows use llm-judge, so the run carries realistic warnings as well.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any, Callable, TextIO

WORDS = ("order refund receipt boots jacket tent stove warranty zip pack delivery carrier store "
         "return window policy customer agent ticket safety queue credit apology invoice total "
         "days within original payment method size exchange damaged late missing item account "
         "address shipping tracking number manager escalate defect wear tear lifetime trail "
         "ridgeline summit basecamp gear lantern sleeping bag rain shell").split()
# Strings real sheets carry and naive converters trip over.
ODD = ("\"quoted\"", "a, b", "N/A", "007", "|", "é", "日本", "🙂", "line one\nline two", "=SUM(A1)",
       "50% off", "{{ name }}", "back\\slash", "tab\there")
ROLES = ("user", "assistant")
TOOLS = ("lookup_order", "issue_refund", "cancel_order", "create_ticket", "escalate", "send_email",
         "check_inventory", "update_address")
CONCERNS = ("invented-policy", "refund-accuracy", "unauthorised-action", "tone", "privacy",
            "safety-escalation", "hallucinated-sku", "prompt-injection")
# oracle type -> evaluators a family of that type may use (all admissible; llm-judge is the
# conditional one and makes the validator warn, as real sets do).
EVALUATORS = {
    "reference-answer": ("exact-or-programmatic",) * 10 + ("rubric-human", "llm-judge"),
    "acceptable-set": ("exact-or-programmatic",),
    "rubric": ("rubric-human",) * 5 + ("human-expert", "llm-judge"),
    "expected-tool-calls": ("trajectory-or-state-check", "exact-or-programmatic"),
    "expected-final-state": ("trajectory-or-state-check",),
    "expected-behavior-only": ("human-expert",),
}
ORACLES = tuple(EVALUATORS)
ORACLE_WEIGHTS = (30, 15, 20, 15, 10, 10)
PROVENANCES = ("observed-incident", "production-sample", "expert-authored", "synthetic-perturbation",
               "imported")
FAMILIES = 300


class Words:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def text(self, low: int, high: int) -> str:
        rng = self.rng
        words = rng.choices(WORDS, k=rng.randint(low, high))
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words) + 1), rng.choice(ODD))
        return " ".join(words).capitalize()

    def sentence(self) -> str:
        return self.text(5, 14) + "."

    def items(self, low: int, high: int) -> list[str]:
        return [self.text(2, 6) for _ in range(self.rng.randint(low, high))]


def _input(w: Words) -> Any:
    rng = w.rng
    kind = rng.random()
    if kind < 0.45:
        return w.text(6, 20) + "?"
    if kind < 0.85:
        turns = [{"role": "system", "content": "You are Trailhead's support agent."}] if rng.random() < 0.5 else []
        for i in range(rng.choice((1, 1, 3, 5))):
            turns.append({"role": ROLES[i % 2], "content": w.text(4, 16)})
        return {"messages": turns}
    return {"order_id": f"TH-{rng.randint(100000, 999999)}", "question": w.text(5, 15),
            "locale": rng.choice(("en-US", "en-GB", "de-DE", "ja-JP"))}


def _expected(oracle: str, w: Words) -> tuple[bool, Any]:
    rng = w.rng
    if oracle == "reference-answer":
        if rng.random() < 0.2:
            return True, {"merchant": "Trailhead Outfitters", "total": round(rng.uniform(5, 500), 2),
                          "currency": "USD", "store": f"{rng.randint(1, 999):04d}"}
        return True, w.sentence()
    if oracle == "acceptable-set":
        return True, w.items(2, 4)
    if oracle == "expected-tool-calls":
        return True, [{"name": rng.choice(TOOLS), "arguments": {"order_id": f"TH-{rng.randint(100000, 999999)}",
                                                                "notify": rng.random() < 0.5}}
                      for _ in range(rng.randint(1, 3))]
    if oracle == "expected-final-state":
        return True, {"table": "tickets", "where": {"customer_id": rng.randint(1, 99999)},
                      "expect": {"status": rng.choice(("escalated", "closed", "open")), "priority_rank": 1.0}}
    if oracle == "rubric" and rng.random() < 0.3:
        return True, None
    return False, None


# Optional case fields: (probability, oracle types it applies to or None for all, value).
OPTIONAL: tuple[tuple[float, tuple[str, ...] | None, Callable[[Words], Any], str], ...] = (
    (0.5, None, lambda w: w.text(5, 12), "scenario"),
    (0.4, None, lambda w: w.rng.choice(("customer", "admin", "internal API", "store manager")), "actor"),
    (0.5, None, lambda w: w.items(1, 3), "unacceptableBehavior"),
    (0.4, None, lambda w: w.rng.choice(("R0", "R1", "R2", "R3")), "reversibility"),
    (0.4, None, lambda w: w.rng.choice(("B0", "B1", "B2", "B3")), "blastRadius"),
    (0.5, None, lambda w: w.rng.sample(CONCERNS, w.rng.randint(1, 3)), "linkedConcerns"),
    (0.9, ("expected-tool-calls",), lambda w: w.text(4, 10), "toolActionExpectation"),
    (0.2, None, lambda w: w.text(6, 14), "escalationExpectation"),
    (0.4, None, lambda w: w.text(3, 8), "passLogic"),
    (0.3, None, lambda w: str(w.rng.randint(1, 5)), "version"),
    (0.1, None, lambda w: w.text(4, 10), "retirementCondition"),
    (0.05, None, lambda w: {"blueprint": {"pack": "support-agent", "row": w.rng.randint(1, 500)}}, "extensions"),
)


def make_row(number: int, rng: random.Random, w: Words, families: list[tuple[str, str, str]]) -> dict:
    family, oracle, evaluator = families[rng.randrange(len(families))]
    row_id = f"{family}-{number:07d}"
    case: dict[str, Any] = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": w.sentence(),
                            "provenance": rng.choice(PROVENANCES), "evaluator": evaluator,
                            "caseFamily": family}
    if oracle == "rubric":
        case["evaluationCriteria"] = w.items(2, 5)
    if evaluator == "human-expert":
        case["reviewerExpertise"] = w.text(3, 8)
    for chance, only, make, name in OPTIONAL:
        if (only is None or oracle in only) and rng.random() < chance:
            case[name] = make(w)
    row: dict[str, Any] = {"id": row_id, "input": _input(w)}
    has_expected, expected = _expected(oracle, w)
    if has_expected:
        row["expected"] = expected
    metadata: dict[str, Any] = {"case": case, "reason": w.sentence()}
    if rng.random() < 0.5:
        metadata["severity"] = rng.choice(("wrong-answer", "harmful", "annoying", "cosmetic"))
    if rng.random() < 0.3:
        metadata["gate"] = rng.random() < 0.5
    if rng.random() < 0.3:
        metadata["tags"] = rng.sample(("regression", "march-incident", "tone", "tools", "ja", "billing"), 2)
    if rng.random() < 0.1:
        metadata["source"] = {"ticket": f"INC-{rng.randint(1000, 9999)}", "score": rng.randint(1, 5)}
    row["metadata"] = metadata
    return row


def make_families(rng: random.Random) -> list[tuple[str, str, str]]:
    out = []
    for i in range(FAMILIES):
        oracle = rng.choices(ORACLES, ORACLE_WEIGHTS)[0]
        stem = "-".join(rng.sample(WORDS[:40], 2))
        out.append((f"{stem}-{i:03d}", oracle, rng.choice(EVALUATORS[oracle])))
    return out


def generate(n: int, out: TextIO, seed: int = 8) -> None:
    rng = random.Random(seed)
    w = Words(rng)
    families = make_families(rng)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for number in range(1, n + 1):
        out.write(dumps(make_row(number, rng, w, families)) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", type=int, help="number of rows")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args(argv)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            generate(args.n, out, args.seed)
    else:
        generate(args.n, sys.stdout, args.seed)


if __name__ == "__main__":
    main()
