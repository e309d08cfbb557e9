"""Issue 12 §1: what users do to real files, through the CLI as they meet it.

Every real file in the repo (vendor fixtures, golden round trips, docs/examples) is mutated the
way hand edits and cut downloads do it (bytes deleted, inserted, duplicated, the end cut off),
saved under every extension evalconv knows, and run through content detection, `evalconv
validate` and a conversion to every format. No run may show a traceback, reach the CLI's
internal-error guard (exit 70) or exit with a code outside the documented 0, 1 and 2.

CI runs FUZZ_FILES cases from FUZZ_SEED (both fixed here). A longer run is one command:

    EVALCONV_FUZZ_FILES=5000 python -m pytest tests/formats/test_fuzz_real_files.py -n 2
    EVALCONV_FUZZ_SEED=7 ...   # another sample
"""
from __future__ import annotations

import os
import random

import pytest

from conftest import ROOT, run_cli
from evalconv import REGISTRY, EvalconvError
from evalconv.sources import HEAD_BYTES, detect

FUZZ_SEED = int(os.environ.get("EVALCONV_FUZZ_SEED", "12"))
FUZZ_FILES = int(os.environ.get("EVALCONV_FUZZ_FILES", "160"))
BATCHES = 16
DOCUMENTED_EXITS = {0, 1, 2}
SIZE_LIMIT = 64 * 1024

REAL_FILES = sorted(
    p for folder in ("tests/fixtures/vendors", "golden_roundtrips", "docs/examples")
    for p in (ROOT / folder).rglob("*")
    if p.is_file() and p.name != "MANIFEST.json" and p.suffix not in (".toml", ".md")
    and p.stat().st_size <= SIZE_LIMIT)
EXTENSIONS = sorted({e for f in REGISTRY.all() for e in f.extensions}
                    | {".promptfoo.yaml", ".promptfoo.csv", ".txt", ""})
WRITERS = [f for f in REGISTRY.all() if f.can_write]
TOKENS = [b'"', b"'", b",", b";", b"\t", b"\n", b"\r\n", b"\r", b"\x00", b"\xff", b"\xef\xbb\xbf", b"{", b"}",
          b"[", b"]", b":", b"- ", b"file://", b"../", b"null", b"NaN", b"1e999", b"\\", b"|", b"#", b"*a", b"&a "]


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(out))
        kind = rng.choice(("delete", "delete", "insert", "duplicate", "truncate"))
        if kind == "delete":
            del out[at:at + rng.choice((1, 1, 2, 8, 64))]
        elif kind == "insert":
            out[at:at] = rng.choice(TOKENS) if rng.random() < 0.7 else rng.randbytes(rng.randint(1, 6))
        elif kind == "duplicate":
            out[at:at] = out[at:at + rng.randint(1, 300)]
        else:
            del out[at:]
    return bytes(out)


def cases(batch: int) -> list[tuple[int, str, str, bytes]]:
    """(number, source file, extension, mutated bytes): the same list on every run."""
    rng = random.Random(FUZZ_SEED)
    out = []
    for number in range(FUZZ_FILES):
        source = rng.choice(REAL_FILES)
        ext = rng.choice(EXTENSIONS)
        data = mutate(source.read_bytes(), rng)
        if number % BATCHES == batch:
            out.append((number, str(source.relative_to(ROOT)), ext, data))
    return out


@pytest.mark.parametrize("batch", range(BATCHES))
def test_mutated_real_files_never_reach_the_guard(batch, tmp_path, capsys):
    for number, source, ext, data in cases(batch):
        what = f"case {number} (seed {FUZZ_SEED}): {source} mutated, saved as *{ext}"
        path = tmp_path / f"case{number}{ext}"
        path.write_bytes(data)
        try:  # detection on its own: a format, or a one-line EvalconvError, never anything else
            detect(str(path), data[:HEAD_BYTES])
        except EvalconvError:
            pass
        runs = [["validate", str(path)]]
        runs += [[str(path), "--to", f.name, "-o", str(tmp_path / f"out{number}-{f.name}{f.output_suffix}")]
                 for f in WRITERS]
        for args in runs:
            code, err = run_cli(args, capsys)
            assert "Traceback" not in err and "internal error" not in err, f"{what}: {args}: {err}"
            assert code in DOCUMENTED_EXITS, f"{what}: {args}: exit {code}: {err}"


def test_the_sample_covers_every_kind_of_real_file():
    names = {p.suffix for p in REAL_FILES}
    assert {".csv", ".json", ".jsonl", ".yaml"} <= names
    assert any("promptfoo" in str(p) for p in REAL_FILES) and any("examples" in str(p) for p in REAL_FILES)
    picked = {source for b in range(BATCHES) for _, source, _, _ in cases(b)}
    assert len(picked) >= len(REAL_FILES) // 2


def test_detection_never_raises_on_a_json_record_cut_before_its_first_key(tmp_path, capsys):
    """The bug: deepeval's goldens.jsonl with its first `"` deleted, saved as .csv, raised a
    TypeError in LangSmith's content detection (a key chain with no parent key)."""
    text = (ROOT / "tests/fixtures/vendors/deepeval/goldens.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "mutated.csv"
    path.write_text(text.replace('"', "", 1), encoding="utf-8")
    code, err = run_cli(["validate", str(path)], capsys)
    assert code == 2 and err.startswith("evalconv: error: ") and "Traceback" not in err
    for fmt in REGISTRY.all():
        assert fmt.detect(text.replace('"', "", 1)) in (True, False)
