"""The 20-line script a user writes instead of evalconv: the csv and json modules, no validation.

    python bench/baseline_script.py jsonl2csv IN.jsonl OUT.csv
    python bench/baseline_script.py csv2jsonl IN.csv OUT.jsonl   (reads evalconv's canonical CSV)
"""
import csv
import json
import sys

CASE = ["caseId", "oracleType", "expectedBehavior", "provenance", "scenario", "actor", "unacceptableBehavior",
        "evaluationCriteria", "reversibility", "blastRadius", "linkedConcerns", "evaluator",
        "toolActionExpectation", "escalationExpectation", "reviewerExpertise", "passLogic", "version",
        "retirementCondition", "caseFamily", "extensions"]


def cell(value):
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def jsonl_to_csv(src, dst):
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "input", "expected", *(f"case.{k}" for k in CASE), "metadata"])
        for line in f:
            row = json.loads(line)
            meta = dict(row["metadata"])
            case = meta.pop("case")
            writer.writerow([row["id"], cell(row["input"]), cell(row.get("expected", "")),
                             *(cell(case.get(k, "")) for k in CASE), json.dumps(meta, ensure_ascii=False)])


def csv_to_jsonl(src, dst):
    with open(src, encoding="utf-8", newline="") as f, open(dst, "w", encoding="utf-8") as out:
        for record in csv.DictReader(f):
            row, case, meta = {}, {}, {}
            for column, text in record.items():
                if not text:
                    continue
                name, _, kind = column.partition(":")
                value = json.loads(text) if kind == "json" else text
                if name == "case":
                    case.update(value)
                elif name == "metadata":
                    meta.update(value)
                elif name.startswith("metadata."):
                    meta[name[9:]] = value
                elif name == "case.extensions":
                    case["extensions"] = json.loads(value)
                elif name.startswith("case."):
                    lists = ("unacceptableBehavior", "evaluationCriteria", "linkedConcerns")
                    case[name[5:]] = value.split("|") if name[5:] in lists else value
                else:
                    row[name] = value
            row["metadata"] = {"case": case, **meta}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    {"jsonl2csv": jsonl_to_csv, "csv2jsonl": csv_to_jsonl}[sys.argv[1]](sys.argv[2], sys.argv[3])
