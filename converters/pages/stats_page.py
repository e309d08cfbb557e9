"""The `evalconv stats --html` page, drawn from exactly the dict `stats --format json` prints."""
from __future__ import annotations

import os
from typing import Any

from .kit import (MAX_BARS, bar_chart, card, drill, drill_id, gap_list, grid, heat_table, page,
                  section_id, tiles)

IMPLIED_NOTE = ("Light bars: the row names no evaluator and is counted under the one its oracle type "
                "implies (the automated one that needs no model, else llm-judge, else a person).")
MULTI_NOTE = "Multi-valued: a row counts once under each of its values, so the bars add up to more than the rows."


def _notes(name: str, data: dict[str, Any]) -> str:
    notes = []
    if name == "case.evaluator" and any(v.endswith(" (implied)") for v in data["slices"][name]):
        notes.append(IMPLIED_NOTE)
    if name in data["multi_valued"]:
        notes.append(MULTI_NOTE)
    if name == "metadata.severity":
        notes.append("Ordered by how bad a failure is: cosmetic &lt; wrong-answer &lt; harmful.")
    if name in data["capped"]:
        notes.append("Too many distinct values: the later ones count as (other values).")
    values = len(data["slices"][name])
    notes.insert(0, f"{values} value{'s' if values != 1 else ''}")
    return " · ".join(notes)


def _slice_card(name: str, counts: dict[str, int], data: dict[str, Any]) -> str:
    samples = data["samples"].get(name, {})
    back = section_id(name)
    chart = bar_chart(name, counts, total=data["rows"],
                      link=lambda value: f"#{drill_id(name, value)}" if counts.get(value) else None)
    panels = "".join(drill(drill_id(name, value), f"{name} = {value}", samples.get(value, []), n, back=back)
                     for value, n in list(counts.items())[:MAX_BARS] if n)
    return card(name, chart + panels, id=back, note=_notes(name, data))


def _crosstab_card(table: dict[str, Any]) -> str:
    a, b = table["by"]
    name = f"{a},{b}"
    back = section_id(name)
    samples = table.get("samples", {})
    heat = heat_table(a, b, table["counts"], table["columns"],
                      link=lambda row, col: f"#{drill_id(name, row, col)}")
    panels = "".join(drill(drill_id(name, row, col), f"{a} = {row}, {b} = {col}", samples.get(row, {}).get(col, []),
                           n, back=back)
                     for row, cols in table["counts"].items() for col, n in cols.items() if n)
    return card(f"{a} x {b}", heat + panels, id=back, wide=True,
                note="Each cell counts the rows with both values; click a cell for its rows.")


def _gate_items(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"code": f["check"], "message": f["message"], "tone": "bad",
             **({"count": f["count"]} if "count" in f else {})} for f in data["gate"]["failures"]]


def _files(data: dict[str, Any]) -> str:
    files = data["files"]
    if len(files) == 1:
        return files[0]["path"]
    return f"{len(files)} files: " + ", ".join(f["path"] for f in files[:6]) + (" …" if len(files) > 6 else "")


def render(data: dict[str, Any]) -> str:
    gate = data["gate"]
    gate_tile = ("—", "") if not gate["checks"] else ("passed", "good") if gate["ok"] else (
        f"failed ({len(gate['failures'])})", "bad")
    top = [("rows", f"{data['rows']:,}", ""), ("files", len(data["files"]), ""),
           ("slices", len(data["slices"]), ""),
           ("gaps", len(data["gaps"]), "warn" if data["gaps"] else "good"), ("gate", gate_tile[0], gate_tile[1])]
    if data["invalid"]:
        top.append(("invalid rows", data["invalid"], "bad"))
    if data.get("retired", {}).get("ledgers"):
        top.append(("retired", data["retired"]["cases"], ""))
    body = [tiles(top)]
    problems = _gate_items(data) + data["gaps"]
    if problems:
        listing = gap_list(problems, link=lambda g: f"#{section_id(g['slice'])}"
                           if g.get("slice") in data["slices"] else None)
        body.append(card("Gaps and gate", listing, id="gaps", wide=True,
                         note="What the set is missing. A gate (--min, --fail-on) turns any of these into a "
                              "failing check."))
    else:
        body.append(card("Gaps and gate", '<p class="more">No gaps found.</p>', id="gaps", wide=True))
    body.append("<h2>Rows by slice</h2>")
    body.append(f'<p class="more">Click a bar for the rows behind it (up to {data["sample_size"]} a value). '
                f'(none): the row leaves the field empty.</p>')
    body.append(grid(_slice_card(name, counts, data) for name, counts in data["slices"].items()))
    if data["crosstabs"]:
        body.append("<h2>Cross-tabs</h2>")
        body.append(grid(_crosstab_card(t) for t in data["crosstabs"]))
    files = data["files"]
    title = f"Coverage: {os.path.basename(files[0]['path']) if len(files) == 1 else f'{len(files)} files'}"
    subtitle = f"{_files(data)} · {data['rows']:,} rows counted"
    return page(title, subtitle, "".join(body), data)
