"""The pandas route a user reaches for instead of evalconv (no validation).

    python bench/baseline_pandas.py jsonl2csv IN.jsonl OUT.csv
    python bench/baseline_pandas.py csv2jsonl IN.csv OUT.jsonl
    python bench/baseline_pandas.py jsonl2parquet IN.jsonl OUT.parquet
    python bench/baseline_pandas.py parquet2jsonl IN.parquet OUT.jsonl
"""
import sys

import pandas as pd


def jsonl_to_csv(src, dst):
    frame = pd.read_json(src, lines=True, dtype=False)
    flat = pd.json_normalize(frame.to_dict(orient="records"))
    flat.to_csv(dst, index=False)


def csv_to_jsonl(src, dst):
    frame = pd.read_csv(src, dtype=str, keep_default_na=False)
    frame.to_json(dst, orient="records", lines=True, force_ascii=False)


def jsonl_to_parquet(src, dst):
    pd.read_json(src, lines=True, dtype=False).to_parquet(dst, index=False)


def parquet_to_jsonl(src, dst):
    pd.read_parquet(src).to_json(dst, orient="records", lines=True, force_ascii=False)


if __name__ == "__main__":
    {"jsonl2csv": jsonl_to_csv, "csv2jsonl": csv_to_jsonl, "jsonl2parquet": jsonl_to_parquet,
     "parquet2jsonl": parquet_to_jsonl}[sys.argv[1]](sys.argv[2], sys.argv[3])
