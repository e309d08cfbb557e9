"""The Format contract: declared options, variants, detection confidence, discovery."""
from __future__ import annotations

import dataclasses
import pkgutil
from pathlib import Path

import pytest

import evalconv
import evalconv.vendors
from conftest import ROOT, row
from evalconv.canonical.format import Format, Variant, WriteOptions, option
from evalconv.registry import REGISTRY, Registry

GOLDEN = str(ROOT / "golden_roundtrips" / "support-agent.jsonl")


def test_every_vendor_package_is_a_registered_format_of_its_own_name():
    packages = [m.name for m in pkgutil.iter_modules(evalconv.vendors.__path__)
                if m.ispkg and not m.name.startswith("_")]
    assert packages, "no vendor packages found"
    for package in packages:
        name = package.replace("_", "-")  # vendors/pydantic_evals/ is the format pydantic-evals
        assert name in REGISTRY.names(), f"vendors/{package}/ is not registered as {name}"
        assert REGISTRY.get(name).name == name


def test_every_vendor_package_is_listed_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for folder in sorted(Path(evalconv.vendors.__path__[0]).glob("*/__init__.py")):
        assert f'"evalconv.vendors.{folder.parent.name}"' in text, (
            f"add \"evalconv.vendors.{folder.parent.name}\" to [tool.setuptools] packages")


class _Raises(Format):
    name = "test-raises"
    title = "a format whose detect has a bug"
    extensions = (".jsonl",)

    def detect(self, head: str) -> float:
        raise KeyError("bug")


def test_a_detect_that_raises_never_reaches_the_user():
    registry = Registry()
    registry.register("test-raises", _Raises())
    registry.register("jsonl", "evalconv.canonical.json_format:JSONL_FORMAT", fallback=True)
    assert registry.detect("set.jsonl", '{"id": "a"}').name == "jsonl"
    assert registry.detect(None, '{"id": "a"}').name == "jsonl"
    assert "KeyError" in registry.detect_failures["test-raises"]


class _Sure(Format):
    name = "test-sure"
    title = "claims JSON objects strongly"

    def __init__(self, confidence: float) -> None:
        self.confidence = confidence

    def detect(self, head: str) -> float:
        return self.confidence


def test_the_most_confident_format_wins_and_the_earlier_one_on_a_tie():
    registry = Registry()
    registry.register("weak", _Sure(0.2))
    registry.register("strong", _Sure(0.9))
    assert registry.detect(None, "{}").confidence == 0.9
    registry = Registry()
    first, second = _Sure(0.5), _Sure(0.5)
    registry.register("first", first)
    registry.register("second", second)
    assert registry.detect(None, "{}") is first


def test_an_unknown_output_extension_for_a_format_of_several_variants_is_refused(tmp_path):
    out = tmp_path / "x.out"
    with pytest.raises(evalconv.UsageError) as err:
        evalconv.convert(GOLDEN, str(out), to="promptfoo")
    assert ".yaml, .yml, .json, .jsonl or .csv" in str(err.value) and not out.exists()


def test_regression_dash_o_x_out_with_to_promptfoo_silently_picked_yaml(tmp_path):
    from click.testing import CliRunner

    from evalconv.cli import cli
    result = CliRunner().invoke(cli, [GOLDEN, "--to", "promptfoo", "-o", str(tmp_path / "x.out")])
    assert result.exit_code == 2 and "name it .yaml" in result.stderr and not (tmp_path / "x.out").exists()
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name, variant", [("t.yaml", "yaml"), ("t.YML", "yaml"), ("t.json", "json"),
                                           ("t.jsonl", "jsonl"), ("t.csv", "csv"), (None, "yaml")])
def test_promptfoo_variants_by_suffix(name, variant):
    assert REGISTRY.get("promptfoo").make_options(name).variant == variant


def test_a_single_variant_writer_refuses_a_name_that_promises_another_format():
    with pytest.raises(evalconv.UsageError, match="writes JSONL; name the output .langsmith.jsonl or .jsonl"):
        REGISTRY.get("langsmith").make_options("set.json")
    assert REGISTRY.get("langsmith").make_options("set.out").variant == "jsonl"


def test_options_are_checked_in_one_place_for_the_library_too(tmp_path):
    rows = [evalconv.Row.from_json(row("a"))]
    with pytest.raises(evalconv.UsageError, match="--excel-safe guards CSV cells"):
        evalconv.write(rows, str(tmp_path / "o.jsonl"), "jsonl", excel_safe=True)
    with pytest.raises(evalconv.UsageError, match="has no option 'excel_saf'"):
        evalconv.write(rows, str(tmp_path / "o.csv"), "csv", excel_saf=True)
    with pytest.raises(evalconv.UsageError, match="--excel-safe: 'yes' is not"):
        evalconv.write(rows, str(tmp_path / "o.csv"), "csv", excel_safe="yes")
    assert not list(tmp_path.iterdir())
    evalconv.write(rows, str(tmp_path / "o.jsonl"), "jsonl", excel_safe=False)  # the default: not given


def test_the_command_line_offers_every_declared_option():
    from click.testing import CliRunner

    from evalconv.cli import cli
    help_text = CliRunner().invoke(cli, ["convert", "--help"]).output
    for declared in REGISTRY.declared_options().values():
        assert declared.metadata["flag"] in help_text


def test_a_mistyped_declaration_is_an_error_at_import():
    with pytest.raises(TypeError, match="option"):
        @dataclasses.dataclass(frozen=True)
        class _Options(WriteOptions):
            level: int = 3

        class _Bad(Format):
            options = _Options
    with pytest.raises(TypeError, match="Variant"):
        class _BadVariants(Format):
            variants = (".json",)  # type: ignore[assignment]


def test_a_write_shape_is_one_of_the_declared_shapes():
    with pytest.raises(TypeError, match="write_shape"):
        class _Bad(Format):
            write_shape = "line-per-chunk"


def test_a_format_of_the_contract_before_write_shape_still_goes_on_two_cores():
    """A format written against the old contract said `splits(options) -> True`: it is a
    line-per-row format (its writer has `encode` and `keep` of its own)."""
    committed = []

    class _Old(Format):
        name = "test-old"

        def splits(self, options: WriteOptions) -> bool:
            return True

        def committed(self, writer, options):  # before side files came through the contract
            committed.append(options)

    assert _Old.write_shape == "line-per-row" and Format.write_shape == "document"
    _Old().committed(None, WriteOptions(), files=None)
    assert committed == [WriteOptions()]
    assert not [f.name for f in REGISTRY.all() if "splits" in type(f).__dict__], "declare write_shape instead"


def _writers(fmt: Format):
    """The format's writer for each variant it writes (a file format), on a text buffer."""
    import io

    from evalconv.reports import LossReport

    for suffix in [v.suffixes[0] for v in fmt.variants] or [fmt.output_suffix]:
        options = fmt.make_options("out" + suffix)
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
        yield suffix, fmt.open_writer(out, LossReport(fmt.name), options)


def test_a_format_writes_as_its_write_shape_says():
    """A line-per-row writer is a `LineWriter` (a vendor's `write` is the base class's, or its own
    for a `HoldingWriter`; the canonical CSV spools its lines for the header); a columnar one
    takes record batches."""
    from evalconv.canonical.format import ColumnarWriter, HoldingWriter, LineWriter

    shapes = {}
    for fmt in REGISTRY.all():
        if not fmt.can_write or fmt.folder:
            continue
        for suffix, writer in _writers(fmt):
            shapes[fmt.name] = fmt.write_shape
            if fmt.write_shape == "line-per-row":
                assert isinstance(writer, LineWriter), (fmt.name, suffix)
                assert type(writer).write is LineWriter.write or isinstance(writer, HoldingWriter) \
                    or not type(fmt).__module__.startswith("evalconv.vendors."), (fmt.name, suffix)
            elif fmt.write_shape == "columnar":
                assert isinstance(writer, ColumnarWriter), (fmt.name, suffix)
    assert shapes["csv"] == shapes["jsonl"] == shapes["promptfoo"] == "line-per-row"
    assert shapes["parquet"] == REGISTRY.get("hf").write_shape == "columnar"
    assert shapes["json"] == shapes["ragas"] == "document"


def test_a_declared_option_reaches_the_writer():
    @dataclasses.dataclass(frozen=True)
    class _Options(WriteOptions):
        level: int = option(3, flag="--level", help="h", goes_with="is for test")

    class _Leveled(Format):
        name = "test-leveled"
        options = _Options
        variants = (Variant("a", "A", (".a",)),)

    made = _Leveled().make_options("x.a", level=5)
    assert isinstance(made, _Options) and made.level == 5 and made.variant == "a" and made.path == "x.a"
    with pytest.raises(evalconv.UsageError):
        _Leveled().make_options("x.a", level=True)


def test_output_suffix_defaults_to_the_first_extension():
    assert REGISTRY.get("deepeval").output_suffix == ".deepeval.json"
    assert all(f.output_suffix or f.folder for f in REGISTRY.all() if f.can_write)  # hf: OUTDIR/<name>/


def _imports(folder: str, package: str, root: Path = ROOT):
    """(file, module) for each module that a file under `folder` (the package `package`)
    imports, relative imports resolved; `from m import n` counts as m and as m.n."""
    import ast

    for path in sorted((root / folder).rglob("*.py")):
        parts = [*package.split("."), *path.relative_to(root / folder).with_suffix("").parts]
        here = parts[:-1]  # the package a relative import starts from
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join([*here[:len(here) - node.level + 1], *([node.module] if node.module else [])]) \
                    if node.level else node.module or ""
                yield path, base
                for alias in node.names:
                    yield path, f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name


def test_the_import_walk_resolves_relative_imports(tmp_path):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "sub" / "__init__.py").write_text("from . import a\n", encoding="utf-8")
    (tmp_path / "src" / "sub" / "mod.py").write_text(
        "import os.path\nfrom .. import cli\nfrom ..reports import Loss\ndef f():\n    from .a import b\n", encoding="utf-8")
    found = {(path.name, module) for path, module in _imports("src", "top.pkg", root=tmp_path)}
    assert found == {("__init__.py", "top.pkg.sub"), ("__init__.py", "top.pkg.sub.a"), ("mod.py", "os.path"),
                     ("mod.py", "top.pkg"), ("mod.py", "top.pkg.cli"), ("mod.py", "top.pkg.reports"),
                     ("mod.py", "top.pkg.reports.Loss"), ("mod.py", "top.pkg.sub.a"), ("mod.py", "top.pkg.sub.a.b")}


def test_canonical_imports_nothing_from_the_application_layer():
    """canonical/ is the bottom layer: the registry, API, reports, vendors and CLI build on it,
    never the reverse (formats see reports through the protocols in canonical/reporting.py)."""
    bad = [(path.name, module) for path, module in _imports("canonical", "evalconv.canonical")
           if module.split(".")[0] in ("evalconv", "converters", "vendors")
           and not (module == "evalconv.canonical" or module.startswith("evalconv.canonical."))]
    assert not bad


def _outside_allowed(module: str, own: str) -> bool:
    """Is `module`, imported by vendor package `own`, a part of evalconv a vendor may not import?
    Allowed: evalconv.canonical.*, evalconv.vendors._common.*, and the vendor's own package."""
    if module.split(".")[0] in ("converters", "canonical", "vendors"):
        return True  # the folders by their names, not as the import package maps them
    if module.split(".")[0] != "evalconv" or module == "evalconv.vendors":
        return False  # a library, or the namespace the relative imports start from
    allowed = ("evalconv.canonical", "evalconv.vendors._common", f"evalconv.vendors.{own}")
    return not any(module == top or module.startswith(top + ".") for top in allowed)


def test_the_allow_list_of_what_a_vendor_imports(tmp_path):
    assert not _outside_allowed("evalconv.canonical.format.Format", "x")
    assert not _outside_allowed("evalconv.vendors._common.records", "x")
    assert not _outside_allowed("evalconv.vendors.x.fields", "x") and not _outside_allowed("yaml", "x")
    assert _outside_allowed("evalconv.atomic", "x") and _outside_allowed("evalconv.vendors.y", "x")
    assert _outside_allowed("evalconv", "x") and _outside_allowed("evalconv.reports.LossReport", "x")


def test_vendors_import_only_canonical_and_common():
    """An allow-list: a vendor package imports `evalconv.canonical.*`, `evalconv.vendors._common.*`
    and its own modules, nothing else of evalconv (not the CLI, the reports, atomic output or
    another vendor): a format works the same from the library, sees reports through
    canonical/reporting.py's protocols and writes side files through the `Format` contract."""
    bad = [(str(path.relative_to(ROOT)), module) for path, module in _imports("vendors", "evalconv.vendors")
           if path.parent != ROOT / "vendors"
           and _outside_allowed(module, path.relative_to(ROOT / "vendors").parts[0])]
    assert not bad


def test_a_vendor_imports_no_other_vendor():
    """Adding a vendor touches nothing in the others: each detects by its own keys, and what they
    share lives in vendors/_common and canonical/ (the head scanner is canonical/head.py)."""
    vendors = {p.parent.name for p in (ROOT / "vendors").glob("*/__init__.py") if not p.parent.name.startswith("_")}
    bad = [(str(path.relative_to(ROOT)), module) for path, module in _imports("vendors", "evalconv.vendors")
           if module.startswith("evalconv.vendors.") and module.split(".")[2] in vendors - {path.parent.name}]
    assert vendors and not bad


def test_every_finding_code_in_the_source_is_in_the_table():
    """A mistyped code fails here for every call site, not only the ones a test happens to reach."""
    import ast

    from evalconv.canonical.findings import CODES
    used = set()
    for folder in ("canonical", "converters", "vendors"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding" and node.args \
                        and isinstance(node.args[0], ast.Constant):
                    used.add((node.args[0].value, path.name))
    assert used and not {(code, where) for code, where in used if code not in CODES}


def test_a_finding_with_an_unknown_code_cannot_be_made():
    from evalconv.canonical.findings import Finding
    with pytest.raises(ValueError, match="unknown finding code 'duplicate-ids'"):
        Finding("duplicate-ids", "x")


# --- a new format is one package -----------------------------------------------------------------

_TOY = '''"""A throwaway format: canonical JSONL under its own name and suffix."""
from evalconv.canonical.json_format import CanonicalJSONL
from evalconv.canonical.row import Row


class Toy(CanonicalJSONL):
    name = "toy"
    title = "Toy (a format made by a test)"
    extensions = (".toy",)
    output_suffix = ".toy"
    fallback = False

    def detect(self, head: str) -> float:
        return 0.9 if head.startswith('{"id"') else 0.0
{broken}

FORMAT = Toy()
'''
_BROKEN = '''
    def detect(self, head: str) -> float:
        return {}["no key"]  # a bug the contract must catch

    def open_writer(self, out, report, options):
        inner = super().open_writer(out, report, options)

        class Forgetful:  # drops `expected` without a word in the loss report
            def write(self, row):
                inner.write(Row.from_json({k: v for k, v in row.to_json().items() if k != "expected"}))

            def close(self):
                inner.close()
        return Forgetful()
'''
# Loaded by `pytest -p`, before the registry: the folder beside it is searched as more of
# evalconv.vendors, as if the toy package had been dropped into vendors/.
_PLUGIN = '''import pathlib
import evalconv.vendors
evalconv.vendors.__path__.append(str(pathlib.Path(__file__).parent / "vendors"))
'''


def _contract_with_toy(tmp_path, broken: bool):
    import os
    import subprocess
    import sys

    (tmp_path / "vendors" / "toy").mkdir(parents=True)
    body = _TOY.replace("{broken}", _BROKEN if broken else "")
    (tmp_path / "vendors" / "toy" / "__init__.py").write_text(body, encoding="utf-8")
    (tmp_path / "toy_plugin.py").write_text(_PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/formats/test_every_format.py", "-p", "toy_plugin",
                           "-k", "toy", "-q", "-rA", "-p", "no:cacheprovider", "-n", "0"],
                          cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    results = {}
    for line in done.stdout.splitlines():
        verdict, _, test = line.partition(" ")
        if verdict in ("PASSED", "FAILED") and "::" in test:
            results[test.split("::")[1].split(" ")[0]] = verdict
    return done, results


def test_a_new_format_is_one_package_and_the_contract_finds_it(tmp_path):
    """A format package dropped into evalconv.vendors, with nothing edited anywhere else, is found
    by the registry and checked by every contract test; a broken one fails them."""
    done, results = _contract_with_toy(tmp_path / "good", broken=False)
    toy = {t for t in results if "toy" in t}
    assert done.returncode == 0 and set(results.values()) == {"PASSED"}, done.stdout[-3000:]
    contract = {"test_round_trip_is_exact_up_to_the_loss_report", "test_detection_never_raises_and_answers_a_confidence",
                "test_malformed_input_is_one_line_per_problem_never_a_traceback", "test_the_declarations_hold_together",
                "test_random_rows_come_back_exactly_up_to_the_loss_report"}
    assert {t.split("[")[0] for t in toy} == contract, sorted(toy)

    done, results = _contract_with_toy(tmp_path / "broken", broken=True)
    failed = {t.split("[")[0] for t, verdict in results.items() if verdict == "FAILED"}
    assert done.returncode == 1
    assert {"test_detection_never_raises_and_answers_a_confidence",
            "test_random_rows_come_back_exactly_up_to_the_loss_report"} <= failed, done.stdout[-3000:]


def test_no_script_or_test_edits_sys_path_to_import():
    """Test helpers import through pytest's `pythonpath` (pyproject.toml); bench scripts import their
    siblings because Python puts a script's own folder first on sys.path."""
    import re

    for folder in ("tests", "bench", "docs"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=", text), path
