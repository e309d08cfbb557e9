"""`evalconv report RUN... --cases SET...` and `evalconv runs import SOURCE... --store DIR`."""
from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..runs import index as runindex, report as runreport, store as runstore, verdicts as harness_verdicts
from ..canonical.vocabulary import RELEASE
from ..runs.gates import MIN_AGREEMENT, GatePolicy
from ..canonical.errors import UsageError, one_line
from ..output_paths import check_outputs
from ..runs.readers import RESULTS_REGISTRY
from .texttable import aligned
from ..canonical.suggest import count
from .common import echo_json, handles_errors, quiet_flag
from . import progress
from .pages import by_option, format_option, html_option, say_written, write_page

DAMAGE_SHOWN = 20
TEXT_SHOWN = 3  # failed (and unscored) cases the text report names per slice value
_harness_option = click.option("--harness", type=click.Choice(sorted(RESULTS_REGISTRY.readers)), default=None,
                               help="Whose run output the files are (default: from their content).")


def _evaluators(specs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for spec in specs:
        name, eq, type_ = spec.rpartition("=")
        if not eq or not name:
            raise UsageError(f"--evaluator '{spec}': expected NAME=TYPE, e.g. tone_review=human-expert")
        out[name] = type_
    return out


@click.command("report")
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
@click.option("--cases", "cases", multiple=True, required=True, metavar="SET",
              help="The case set(s) the runs ran (repeatable; any format evalconv reads).")
@by_option("Slice by this case./metadata. field (repeatable; default: " + ", ".join(runreport.DEFAULT_BY) + ").")
@click.option("--evaluator", "evaluators", multiple=True, metavar="NAME=TYPE",
              help="The evaluator type of a harness check evalconv cannot infer (repeatable).")
@click.option("--threshold", "thresholds", multiple=True, metavar="NAME=SCORE",
              help="The score at which a harness's scores (braintrust=0.8) or one scorer's (Levenshtein=0.9) "
                   "pass, where the harness has no pass rule of its own (repeatable; docs/runs.md gives the defaults).")
@click.option("--fail-under", "gates", multiple=True, metavar="SLICE=RATE",
              help="Exit 1 when the slice's pass rate over release-gating cases is below RATE, one of "
                   "them is unscored, or a pass rests only on an unvalidated llm-judge, e.g. "
                   "metadata.severity=harmful:1.0 or overall:0.9 (repeatable).")
@click.option("--gate-field", default=runreport.GATE_FIELD, show_default=True, metavar="FIELD",
              help=f"The field that says a case gates a release ('{RELEASE}', true, or a list holding "
                   f"'{RELEASE}').")
@click.option("--allow-unscored", is_flag=True,
              help="Let a gate pass although some of its cases are unscored (by default one unscored case fails it).")
@click.option("--min-graded", type=click.FloatRange(0.0, 1.0), default=None, metavar="SHARE",
              help="Let a gate pass when at least this share of its cases is graded, e.g. 0.9.")
@click.option("--min-agreement", type=click.FloatRange(0.0, 1.0), default=MIN_AGREEMENT, show_default=True,
              metavar="SHARE", help="Judge-human agreement on a case family below which a pass given only by "
                                    "an llm-judge does not count toward a gate.")
@click.option("--trust-judge", is_flag=True,
              help="Count passes given only by an llm-judge toward gates without agreement evidence.")
@click.option("--show-cases", type=click.IntRange(min=0), default=None, metavar="N",
              help=f"Failed and unscored cases listed per slice value and outcome (default: "
                   f"{runreport.CASES_SHOWN} in JSON and HTML, {TEXT_SHOWN} in text; 0: all).")
@_harness_option
@format_option("json")
@html_option("Also write a self-contained HTML page (the stats page style).")
@quiet_flag
@handles_errors
def report_command(runs: tuple[str, ...], cases: tuple[str, ...], by: tuple[str, ...], evaluators: tuple[str, ...],
                   thresholds: tuple[str, ...], gates: tuple[str, ...], gate_field: str, allow_unscored: bool, min_graded: float | None,
                   min_agreement: float, trust_judge: bool, show_cases: int | None, harness: str | None,
                   output_format: str, html_path: str | None) -> None:
    """Pass rates of runs against their cases, overall and per slice, worst slice first.

    A RUN is a run store folder (`evalconv runs import`) or a harness's own output file
    (promptfoo, DeepEval, Braintrust, LangSmith, Inspect, Ragas). Lists the failed and unscored
    cases of each slice by name. Exit 1 when a --fail-under gate is not met: its rate is below,
    one of its cases is unscored, or a pass rests only on an llm-judge nobody validated.
    """
    check_outputs(runs + cases, {"--html": html_path}, stdout=True)
    policy = GatePolicy(allow_unscored=allow_unscored, min_graded=min_graded, min_agreement=min_agreement,
                        trust_judge=trust_judge)
    with progress.shown():
        result = runreport.report(list(runs), list(cases), by=by or None, evaluators=_evaluators(evaluators),
                                  gates=gates, gate_field=gate_field, harness=harness, policy=policy,
                                  cases_shown=runreport.CASES_SHOWN if show_cases is None else show_cases,
                                  thresholds=harness_verdicts.parse_thresholds(thresholds))
    if html_path is not None:
        from ..pages.report_page import render

        write_page(html_path, render(result))
    if output_format == "json":
        echo_json(result)
    else:
        click.echo(render_text(result, TEXT_SHOWN if show_cases is None else show_cases))
    say_written(html_path)
    sys.exit(1 if any(not g["ok"] for g in result["gates"]) else 0)


def _rate(bucket: dict[str, Any]) -> str:
    rate = bucket["passRate"]
    return "   n/a" if rate is None else f"{rate * 100:5.1f}%"


def _lines(buckets: dict[str, dict[str, Any]], width: int) -> list[str]:
    """A line a bucket: its label in a column `width` wide (a longer one cut), then its counts."""
    def counts(bucket: dict[str, Any]) -> str:
        flags = f"  ({bucket['starter']} starter)" if bucket["starter"] else ""
        flags += f"  ({bucket['conditional']} passed on a judge alone)" if bucket["conditional"] else ""
        return (f"{_rate(bucket)}  passed {bucket['passed']:>4}  failed {bucket['failed']:>4}  "
                f"unscored {bucket['unscored']:>4}  excluded {bucket['excluded']:>4}{flags}")
    return aligned([[label, counts(bucket)] for label, bucket in buckets.items()],
                   widths=[width], cut="…", indent="  ", gap=" ")


def _failure_lines(result: dict[str, Any], shown: int) -> list[str]:
    """The failed and unscored cases of each slice value, worst slice first, one line each."""
    out = []
    for name, values in result["failures"].items():
        if not values:
            continue
        out.append(f"failing and unscored by {name} (worst first):")
        for value, listing in values.items():
            for outcome in ("failed", "unscored"):
                cases = listing[outcome]
                more = len(cases) - (shown or len(cases)) + listing[f"{outcome}NotShown"]
                for case in cases[:shown or None]:
                    facts = "; ".join(f"{k} {case[k]}" for k in ("severity", "reason")
                                      if case[k] and name != f"metadata.{k}")  # not the slice's own value again
                    by = f"{case['evaluator']}{' (llm-judge, conditional)' if case['conditional'] else ''}: " \
                        if case["evaluator"] else ""
                    at = f" [{case['outputRef']}]" if case["outputRef"] else ""
                    out.append(one_line(f"  {value}: {outcome} {case['id']}{' (' + facts + ')' if facts else ''}: "
                                        f"{by}{case['message'] or ''}{at}"))
                if more > 0:
                    out.append(f"  {value}: ... and {more} more {outcome} (--show-cases 0 lists them all)")
    return out


def render_text(result: dict[str, Any], shown: int = TEXT_SHOWN) -> str:
    out = [f"{count(result['cases'], 'case')}, {count(result['attempts'], 'attempt')}, "
           f"{count(result['results'], 'result')}"]
    out += _lines({"overall": result["overall"]}, 24)
    if result["headline"]["line"]:
        out.append(f"headline: {result['headline']['line']}")
    for name, values in result["slices"].items():
        out.append(f"by {name} (worst first):")
        width = max([len(v) for v in values] + [8])
        out += _lines(values, min(width, 48))
    out += _failure_lines(result, shown)
    flags = result["flags"]
    if flags["conditionalResults"]:
        out.append(f"conditional: {count(flags['conditionalResults'], 'result')} from an llm-judge admitted only "
                   f"once validated against people; {count(flags['judgeOnlyCases'], 'case')} passed on such a "
                   f"judge alone")
    if flags["excludedResults"]:
        out.append(f"excluded: {count(flags['excludedResults'], 'result')} from an evaluator the case's oracle type bars "
                   f"(not in any pass rate)")
    if flags["starterCases"]:
        n = flags["starterCases"]
        out.append(f"starter: {count(n, 'case is a starter example', 'cases are starter examples')}, "
                   f"not {'a validated answer' if n == 1 else 'validated answers'}")
    if flags["untypedResults"]:
        out.append(f"untyped: {count(flags['untypedResults'], 'result')} whose evaluator type is unknown "
                   f"(admitted unchecked; name it with --evaluator NAME=TYPE)")
    if flags["notRun"]:
        out.append(f"not run: {count(flags['notRun'], 'case has', 'cases have')} no attempt in these runs (unscored)")
    for family, agreement in result["judgeAgreement"].items():
        kappa = "n/a" if agreement["kappa"] is None else f"{agreement['kappa']:.3f}"
        out.append(f"judge agreement [{family}]: {agreement['agree']}/{agreement['pairs']} "
                   f"({agreement['percentAgreement'] * 100:.1f}%), Cohen's kappa {kappa}")
    out += _verdict_lines(result["verdicts"])
    for kind, n in result["ledgerCounts"].items():
        out.append(f"ledger: {n} {kind}")
    for entry in result["ledger"][:20]:
        where = entry.get("source") or {}
        at = where.get("file", "")
        if where.get("line") is not None:
            at += f":{where['line']}"
        elif where.get("entry") is not None:
            at += f" entry {where['entry']}"
        out.append(f"  {at}: {entry['kind']}: {entry['reason']}")
    for gate in result["gates"]:
        out.append(one_line(f"gate {gate['slice']} >= {gate['threshold']:g} ({gate['counting']}): "
                            f"{'ok' if gate['ok'] else 'FAILED'}: {gate['why']}"))
    return "\n".join(out)


def _verdict_lines(verdicts: dict[str, Any]) -> list[str]:
    """How each scorer was typed, the thresholds used, why a case reads otherwise, and the questions."""
    out = ["evaluator typing (scorer -> type -> why):"] if verdicts["typing"] else []
    out += aligned([[t["scorer"], t["type"] or "unknown", t["why"]] for t in verdicts["typing"]],
                   widths=[32, 26], cut="…", indent="  ", gap=" ")
    out += [f"threshold: {name} passes at {score:g}" for name, score in verdicts["thresholds"].items()]
    out += [f"case {n['caseId']}: {note}" for n in verdicts["caseNotes"] for note in n["notes"]]
    out += [f"warning: {w}" for w in verdicts["warnings"]]
    return out


@click.command("import")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("--store", required=True, metavar="DIR", help="The run store folder (created if needed).")
@_harness_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@quiet_flag
@handles_errors
def import_command(sources: tuple[str, ...], store: str, harness: str | None, output_format: str) -> None:
    """Append a harness's run output to the store. Importing the same run again adds nothing; a
    rerun adds attempts; a rescoring adds results. Exit 1 when a stored attempt would change."""
    store_files = [os.path.join(store, name) for name in (*runstore.FILES.values(), runindex.INDEX)]
    check_outputs(sources, created={"--store": store_files}, stdout=True)
    for path in sources:  # every file must be known before anything is appended
        (RESULTS_REGISTRY.get(harness) if harness else RESULTS_REGISTRY.detect(path))
    with progress.shown():
        summary = runstore.import_runs(store, ((p, RESULTS_REGISTRY.read(p, harness)) for p in sources))
    if output_format == "json":
        echo_json(summary.to_json())
    else:
        added, known = summary.added, summary.known
        click.echo(f"{store}: added {count(added['attempts'], 'attempt')}, {count(added['results'], 'result')}, "
                   f"{count(added['ledger'], 'ledger entry', 'ledger entries')}; already there: "
                   f"{count(known['attempts'], 'attempt')}, {count(known['results'], 'result')}")
        for conflict in summary.conflicts:
            at = conflict["stored"]
            click.echo(f"evalconv: {at['file']}:{at['line']}: conflict: {conflict['id']}: {conflict['reason']}",
                       err=True)
        for damage in summary.damaged[:DAMAGE_SHOWN]:
            click.echo(one_line(f"evalconv: {damage['file']}:{damage['line']}: damaged store line: {damage['reason']}"),
                       err=True)
        if summary.damaged_count > DAMAGE_SHOWN:
            click.echo(f"evalconv: ... and {count(summary.damaged_count - DAMAGE_SHOWN, 'more damaged store line')} "
                       f"(--format json lists the first {len(summary.damaged)})", err=True)
    sys.exit(summary.exit_code)
