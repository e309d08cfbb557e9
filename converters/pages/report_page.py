"""The `evalconv report --html` page, drawn from exactly the dict `report --format json` prints."""
from __future__ import annotations

import os
from typing import Any

from ..canonical.suggest import count as plural
from .kit import LABEL_CHARS, card, esc, esc_wrap, gap_list, grid, page, section_id, table, tiles
from .report_verdicts import verdicts_card

OUTCOMES = (("passed", "#2f9e6e"), ("failed", "#c7372f"), ("unscored", "#aab1bf"))
MAX_VALUES = 24


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def _cut(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(text.split()) or repr(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cases(value: str, listing: dict[str, Any] | None) -> str:
    """The failed and unscored cases behind a bar, one click away (a <details> under it)."""
    if not listing or not (listing["failed"] or listing["unscored"]):
        return ""
    rows = [[f'<span class="id">{esc(c["id"])}</span>', esc(c["outcome"]), esc(c["severity"] or ""),
             esc_wrap(c["reason"] or ""), esc_wrap((c["evaluator"] + ": " if c["evaluator"] else "") + (c["message"] or ""))
             + (' <span class="chip">llm-judge, admitted once validated</span>' if c["conditional"] else ""),
             esc_wrap(c["outputRef"] or "")]
            for outcome in ("failed", "unscored") for c in listing[outcome]]
    hidden = listing["failedNotShown"] + listing["unscoredNotShown"]
    counts = ", ".join(f"{len(listing[k]) + listing[k + 'NotShown']} {k}" for k in ("failed", "unscored")
                       if listing[k] or listing[k + "NotShown"])
    more = (f'<p class="more">{hidden} more not listed (report --show-cases 0 lists every one).</p>'
            if hidden else "")
    return (f'<details class="cases" data-value="{esc(value)}"><summary>{esc(counts)}: the cases</summary>'
            f'{table(["case", "outcome", "severity", "reason", "evaluator: message", "output"], rows)}{more}</details>')


def rate_chart(name: str, buckets: dict[str, dict[str, Any]], failures: dict[str, Any] | None = None) -> str:
    """One stacked bar a value (passed, failed, unscored cases), worst first, its pass rate at the end,
    and under it the cases that did not pass. HTML bars (the page kit's `.chart` rows), so the text
    keeps its size on a phone."""
    items = list(buckets.items())[:MAX_VALUES]
    rows = []
    for value, bucket in items:
        total = bucket["passed"] + bucket["failed"] + bucket["unscored"] or 1
        parts = "".join(f'<span class="bar {outcome}" style="width:{bucket[outcome] / total * 100:.2f}%;background:{colour}" '
                        f'data-count="{bucket[outcome]}"></span>' for outcome, colour in OUTCOMES if bucket[outcome])
        tip = (f"{value}: pass rate {_percent(bucket['passRate'])}; {bucket['passed']} passed, {bucket['failed']} "
               f"failed, {bucket['unscored']} unscored, {bucket['excluded']} results excluded")
        rows.append(
            f'<div class="row rate" data-value="{esc(value)}" data-passed="{bucket["passed"]}" data-failed="{bucket["failed"]}" '
            f'data-unscored="{bucket["unscored"]}" data-rate="{"" if bucket["passRate"] is None else bucket["passRate"]}" '
            f'title="{esc(tip)}"><span class="lbl">{esc(_cut(value))}</span><span class="track stack">{parts}</span>'
            f'<span class="num"><b class="rate-text">{esc(_percent(bucket["passRate"]))}</b></span></div>'
            + _cases(value, (failures or {}).get(value)))
    chart = (f'<div class="chart" data-slice="{esc(name)}" role="img" aria-label="{esc(name)}: pass rate by value, worst first">'
           f'{"".join(rows)}</div>')
    more = len(buckets) - len(items)
    if more > 0:
        chart += f'<p class="more">{plural(more, "more value is", "more values are")} in the table below.</p>'
    body = [[esc(value), _percent(b["passRate"]), *(f'<span data-count="{b[k]}">{b[k]}</span>'
                                                     for k in ("passed", "failed", "unscored", "excluded", "starter"))]
            for value, b in buckets.items()]
    header = ["value", "pass rate", "passed", "failed", "unscored", "excluded", "starter"]
    chart += (f'<details><summary>{"The one value" if len(buckets) == 1 else f"All {len(buckets)} values"} as a table</summary>'
            f'{table(header, body, numeric=tuple(range(1, 7)))}</details>')
    return chart


def _legend() -> str:
    keys = "".join(f'<span><i style="background:{colour}"></i>{outcome}</span>' for outcome, colour in OUTCOMES)
    return f'<div class="legend">{keys}<span>(cases; the pass rate is passed / (passed + failed))</span></div>'


def _problems(data: dict[str, Any]) -> list[dict[str, Any]]:
    out = [{"code": "gate", "message": f"{g['slice']} >= {g['threshold']:g} over {g['counting']}: {g['why']}",
            "tone": "bad", "ids": g["unscoredCases"] + g["judgeOnlyCases"]} for g in data["gates"] if not g["ok"]]
    flags = data["flags"]
    if flags["excludedResults"]:
        out.append({"code": "excluded", "count": flags["excludedResults"], "message":
                    "results from an evaluator the case's oracle type bars: kept out of every pass rate "
                    "(the mixing problem)"})
    for kind, count in data["ledgerCounts"].items():
        out.append({"code": kind, "count": count, "tone": "bad", "message": "in the error ledger below, with the reason"})
    if flags["untypedResults"]:
        out.append({"code": "untyped", "count": flags["untypedResults"], "message":
                    "results whose evaluator type is unknown: admitted unchecked (name it with --evaluator NAME=TYPE)"})
    if flags["conditionalResults"]:
        out.append({"code": "conditional", "count": flags["conditionalResults"], "message":
                    f"results from an llm-judge admitted only once validated against people (see Judge agreement); "
                    f"{plural(flags['judgeOnlyCases'], 'case')} passed on such a judge alone, which a gate counts only "
                    f"where the judge agrees with people on the case family"})
    if flags["notRun"]:
        out.append({"code": "not-run", "count": flags["notRun"], "message": "cases no attempt reached: unscored"})
    if flags["starterCases"]:
        out.append({"code": "starter", "count": flags["starterCases"], "message":
                    "starter examples, not validated answers: counted and flagged"})
    out += [{"code": "gate", "message": f"{g['slice']} >= {g['threshold']:g} over {g['counting']}: {g['why']}",
             "tone": "good"} for g in data["gates"] if g["ok"]]
    return out


def _agreement(data: dict[str, Any]) -> str:
    rows = [[esc(family), str(a["pairs"]), str(a["agree"]), _percent(a["percentAgreement"]),
             "n/a" if a["kappa"] is None else f"{a['kappa']:.3f}", str(a["bothPass"]), str(a["bothFail"]),
             str(a["judgePassHumanFail"]), str(a["judgeFailHumanPass"])]
            for family, a in data["judgeAgreement"].items()]
    return table(["case family", "pairs", "agree", "agreement", "Cohen's kappa", "both pass", "both fail",
                  "judge pass, human fail", "judge fail, human pass"], rows, numeric=tuple(range(1, 9)))


def _ledger(data: dict[str, Any]) -> str:
    rows = []
    for entry in data["ledger"]:
        where = entry.get("source") or {}
        at = where.get("file") or ""
        if where.get("line") is not None:
            at += f":{where['line']}"
        elif where.get("entry") is not None:
            at += f" entry {where['entry']}"
        rows.append([f'<span class="chip">{esc(entry["kind"])}</span>', esc(entry.get("reason") or ""),
                     esc(entry.get("ref") or entry.get("id") or ""), esc(at)])
    listed = sum(data["ledgerCounts"].values())
    note = f'<p class="more">Showing {len(rows)} of {listed}.</p>' if listed > len(rows) else ""
    return table(["kind", "reason", "record", "where"], rows) + note


def render(data: dict[str, Any]) -> str:
    overall = data["overall"]
    rate = overall["passRate"]
    tone = "" if rate is None else "good" if rate >= 0.95 else "warn" if rate >= 0.8 else "bad"
    gates = data["gates"]
    gate_tile = ("—", "") if not gates else ("passed", "good") if all(g["ok"] for g in gates) else ("failed", "bad")
    ledger = sum(data["ledgerCounts"].values())
    body = [tiles([("pass rate", _percent(rate), tone),
                   ("passed", overall["passed"], "good" if overall["passed"] else ""),
                   ("failed", overall["failed"], "bad" if overall["failed"] else "good"),
                   ("unscored", overall["unscored"], "warn" if overall["unscored"] else ""),
                   ("excluded", overall["excluded"], "warn" if overall["excluded"] else ""),
                   ("ledger", ledger, "bad" if ledger else "good"), ("gate", gate_tile[0], gate_tile[1])])]
    problems = _problems(data)
    body.append(card("Gates, exclusions and the ledger", gap_list(problems) if problems else
                     '<p class="more">Nothing excluded, nothing in the ledger.</p>', id="problems", wide=True,
                     note=f"{plural(data['attempts'], 'attempt', grouped=True)} and "
                          f"{plural(data['results'], 'result', grouped=True)} read; a case is counted once."))
    body.append(verdicts_card(data))
    body.append("<h2>Pass rate by slice, worst first</h2>")
    body.append(_legend())
    body.append(grid(card(name, rate_chart(name, buckets, data["failures"].get(name)), id=section_id(name),
                          note=plural(len(buckets), "value"))
                     for name, buckets in data["slices"].items()))
    if data["judgeAgreement"]:
        body.append("<h2>Judge agreement</h2>")
        body.append(card("LLM judge against human verdicts, on the same attempts", _agreement(data), id="agreement",
                         wide=True, note="Per case family. Kappa is n/a when chance agreement is 1 (every "
                                         "verdict the same)."))
    if data["ledger"]:
        body.append("<h2>Error ledger</h2>")
        body.append(card("Records that could not be linked or read", _ledger(data), id="ledger", wide=True))
    sources = data["sources"]
    title = f"Run report: {os.path.basename(sources[0]) if len(sources) == 1 else f'{len(sources)} runs'}"
    subtitle = (f"{', '.join(sources[:4])}{' …' if len(sources) > 4 else ''} · "
                f"{plural(data['cases'], 'case', grouped=True)} · {plural(data['attempts'], 'attempt', grouped=True)} · "
                f"{plural(data['results'], 'result', grouped=True)}")
    return page(title, subtitle, "".join(body), data)
