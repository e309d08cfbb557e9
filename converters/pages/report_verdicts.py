"""The report page's card for the harness's verdicts: both headlines and why they differ, the
per-case notes, the scorer typing table and the questions it asks (issue 25 section 1)."""
from __future__ import annotations

from typing import Any

from .kit import card, esc, table


def verdicts_card(data: dict[str, Any]) -> str:
    headline, verdicts = data["headline"], data["verdicts"]
    if not headline["line"] and not verdicts["typing"]:
        return ""
    parts = []
    if headline["line"]:
        parts.append(f'<p class="headline" data-headline="{esc(headline["line"])}"><b>{esc(headline["line"])}</b></p>')
    if verdicts["warnings"]:
        parts.append("<ul class=\"questions\">" + "".join(f'<li class="warning">{esc(w)}</li>'
                                                          for w in verdicts["warnings"]) + "</ul>")
    notes = [[esc(n["caseId"]), esc(note)] for n in verdicts["caseNotes"] for note in n["notes"]]
    if notes:
        parts.append(table(["case", "how evalconv reads it"], notes))
    rows = [[esc(t["scorer"]), esc(t["harness"] or ""), esc(t["type"] or "unknown"), esc(t["why"]), str(t["results"])]
            for t in verdicts["typing"]]
    parts.append(f"<details><summary>How each scorer was typed ({len(rows)})</summary>"
                 f"{table(['scorer', 'harness', 'type', 'why', 'results'], rows, numeric=(4,))}</details>")
    thresholds = ", ".join(f"{name} passes at {score:g}" for name, score in verdicts["thresholds"].items())
    return card("The harness's verdict beside evalconv's", "".join(parts), id="verdicts", wide=True,
                note=esc(f"Pass thresholds: {thresholds}.") if thresholds else "")
