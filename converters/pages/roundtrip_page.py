"""The `evalconv roundtrip --html` page, drawn from exactly the dict `roundtrip --format json` prints."""
from __future__ import annotations

import os
from typing import Any

from ..canonical.schema import CASE_FIELDS
from ..canonical.suggest import count
from .kit import PALETTES, card, drill, drill_id, esc, gap_list, page, table, tiles

__all__ = ["drill_id", "fates", "render"]

STATUS_COLOURS = {"ok": "#2f9e6e", "lossy": "#b7791f", "fail": "#c7372f", "error": "#8f1d1d"}
IDS_SHOWN = 40
CANONICAL_ORDER = ["$.id", "$.input", "$.expected", *(f"$.metadata.case.{f}" for f in CASE_FIELDS)]


def _field_order(paths: list[str]) -> list[str]:
    def key(path: str) -> tuple[int, int, str]:
        base = path.split("[", 1)[0]
        if base in CANONICAL_ORDER:
            return (CANONICAL_ORDER.index(base), len(path), path)
        return (len(CANONICAL_ORDER) + paths.index(path), 0, path)
    return sorted(dict.fromkeys(paths), key=key)


def fates(data: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, dict[str, Any]]]]:
    """Rows (canonical fields) and, per format and field, the fate a person sees: native,
    carried, dropped (declared, or dropped for some rows in this run), or "lossless"."""
    formats = data["formats"]
    paths = [f["path"] for spec in formats.values() for f in spec["fields"]]
    dropped_now: dict[str, dict[str, int]] = {}
    for result in data["results"]:
        for d in result["dropped"]:
            rows = len(d["ids"]) if "ids" in d else d.get("rows", 0)
            dropped_now.setdefault(result["via"], {}).setdefault(d["path"], 0)
            dropped_now[result["via"]][d["path"]] += rows
            paths.append(d["path"])
    order = _field_order(paths or CANONICAL_ORDER[:3])
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for name, spec in formats.items():
        cells[name] = {}
        for path in order:
            entries = [f for f in spec["fields"] if f["path"] == path]
            kinds = {f["fate"] for f in entries}
            now = dropped_now.get(name, {}).get(path, 0)
            if now or "dropped" in kinds:
                fate = "dropped"
            elif spec["lossless"] and not entries:
                fate = "lossless"
            elif "native" in kinds:
                fate = "native"
            elif "carried" in kinds:
                fate = "carried"
            else:
                fate = "none"
            notes = [f"{f['fate']}: {f['where']}" + (f" ({f['reason']})" if f["reason"] else "") for f in entries]
            if now:
                notes.append(f"dropped in this run for {now} rows")
            cells[name][path] = {"fate": fate, "also_carried": fate == "native" and "carried" in kinds,
                                 "dropped_rows": now, "notes": notes}
    return order, cells


FATE_STYLE = {"native": ("native", PALETTES["fate"]["native"], "#fff"),
              "lossless": ("identical", "#d8f0e4", "#1d6b48"),
              "carried": ("carried", PALETTES["fate"]["carried"], "#fff"),
              "dropped": ("dropped", PALETTES["fate"]["dropped"], "#fff"),
              "none": ("—", "#f4f5f8", "#8a93a3")}


def _fate_matrix(order: list[str], cells: dict[str, dict[str, dict[str, Any]]]) -> str:
    names = list(cells)
    head = "".join(f'<th class="col">{esc(n)}</th>' for n in names)
    lines = [f'<tr><th>canonical field</th>{head}</tr>']
    own = False
    for path in order:
        if not own and path.split("[", 1)[0] not in CANONICAL_ORDER:
            own = True
            lines.append(f'<tr class="divider"><th colspan="{len(names) + 1}">other metadata, and fields a format '
                         f'adds of its own</th></tr>')
        tds = []
        for name in names:
            cell = cells[name][path]
            label, bg, fg = FATE_STYLE[cell["fate"]]
            if cell["also_carried"]:
                label += " + carried"
            if cell["dropped_rows"]:
                label += f" ({cell['dropped_rows']})"
            tip = "; ".join(cell["notes"]) or label
            tds.append(f'<td class="cell fate" data-format="{esc(name)}" data-path="{esc(path)}" '
                       f'data-fate="{cell["fate"]}" style="background:{bg};color:{fg}" title="{esc(tip)}">'
                       f'{esc(label)}</td>')
        lines.append(f'<tr><th><code>{esc(path)}</code></th>{"".join(tds)}</tr>')
    legend = ('<div class="legend"><span><i style="background:#2f9e6e"></i>native: the tool understands it</span>'
              '<span><i style="background:#3f6fd8"></i>carried: kept in free-form metadata, restored on read</span>'
              '<span><i style="background:#c7372f"></i>dropped: not in the file (count: rows this run)</span>'
              '<span><i style="background:#d8f0e4"></i>identical: a canonical format</span></div>')
    return legend + f'<div class="scroll"><table class="heat fates">{"".join(lines)}</table></div>'


def _status_matrix(data: dict[str, Any]) -> str:
    files = list(dict.fromkeys(r["file"] for r in data["results"]))
    routes = list(data["formats"]) or list(dict.fromkeys(r["via"] for r in data["results"]))
    by = {(r["file"], r["via"]): r for r in data["results"]}
    head = "".join(f'<th class="col">{esc(v)}</th>' for v in routes)
    lines = [f"<tr><th>set</th>{head}</tr>"]
    for file in files:
        tds = []
        for via in routes:
            r = by.get((file, via))
            if r is None:
                tds.append('<td class="cell zero">·</td>')
                continue
            status, problems = r["status"], len(r["problems"])
            failed = status in ("fail", "error") or (data["strict"] and status == "lossy")
            text = status + (f" ({problems})" if problems else "") + ("!" if failed and status == "lossy" else "")
            if failed:
                text = f'<a href="#{drill_id("route", file, via)}">{esc(text)}</a>'
            tds.append(f'<td class="cell" data-file="{esc(file)}" data-via="{esc(via)}" data-status="{status}" '
                       f'data-count="{problems}" style="background:{STATUS_COLOURS.get(status, "#888")};color:#fff">'
                       f'{text if failed else esc(text)}</td>')
        lines.append(f'<tr><th>{esc(file)}</th>{"".join(tds)}</tr>')
    return f'<div class="scroll"><table class="heat status">{"".join(lines)}</table></div>'


def _route_panels(data: dict[str, Any]) -> str:
    """For each failing route: its differences grouped by path and problem, with the rows."""
    panels = []
    for r in data["results"]:
        failed = r["status"] in ("fail", "error") or (data["strict"] and r["status"] == "lossy")
        if not failed:
            continue
        groups: dict[tuple[str, str], list[str]] = {}
        for p in r["problems"]:
            groups.setdefault((p["path"], p["problem"]), []).append(p["id"] or "(file)")
        if data["strict"] and r["status"] == "lossy":
            for d in r["dropped"]:
                groups[(d["path"], f"dropped ({d['reason']})")] = d.get("ids") or [f"{d.get('rows')} rows"]
        cells = [[f"<code>{esc(path)}</code>", esc(problem), f'<span data-count="{len(ids)}">{len(ids)}</span>',
                  ", ".join(f'<span class="id">{esc(i)}</span>' for i in ids[:IDS_SHOWN])
                  + (f" … and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else "")]
                 for (path, problem), ids in groups.items()]
        total = sum(len(ids) for ids in groups.values())
        panels.append(drill(drill_id("route", r["file"], r["via"]), f"{r['file']} via {r['via']}: {r['status']}",
                            [], total, back="routes", header=["path", "problem", "rows", "which rows"], cells=cells))
    return "".join(panels)


def _failures(data: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in data["results"]:
        failed = r["status"] in ("fail", "error") or (data["strict"] and r["status"] == "lossy")
        if failed:
            paths = sorted({p["path"] for p in r["problems"]})
            ids = list(dict.fromkeys(p["id"] for p in r["problems"] if p["id"]))
            message = (f"{r['file']} via {r['via']}: {count(len(r['problems']), 'difference')} the loss report does not "
                       f"explain, at {', '.join(paths[:6])}" if r["problems"] else
                       f"{r['file']} via {r['via']}: lossy under --strict")
            out.append({"code": f"{r['via']}: {r['status']}", "message": message, "count": len(r["problems"]),
                        "ids": ids, "tone": "bad"})
    out += [{"code": "unreadable", "message": line, "tone": "bad"} for line in data["unreadable"]]
    return out


def _dropped_table(data: dict[str, Any]) -> str:
    rows = []
    for r in data["results"]:
        for d in r["dropped"]:
            n = len(d["ids"]) if "ids" in d else d.get("rows", 0)
            rows.append([esc(r["file"]), esc(r["via"]), f"<code>{esc(d['path'])}</code>",
                         f'<span data-count="{n}">{n}</span>', esc(d["reason"])])
    if not rows:
        return '<p class="more">No route dropped anything from these sets.</p>'
    return table(["set", "via", "field", "rows", "why"], rows, numeric=(3,))


def render(data: dict[str, Any]) -> str:
    results = data["results"]
    counts = {s: sum(1 for r in results if r["status"] == s) for s in ("ok", "lossy", "fail", "error")}
    files = list(dict.fromkeys(r["file"] for r in results))
    top = [("sets", len(files), ""), ("formats", len(data["formats"]), ""), ("ok", counts["ok"], "good"),
           ("lossy", counts["lossy"], "warn" if counts["lossy"] else ""),
           ("failed", counts["fail"] + counts["error"], "bad" if counts["fail"] + counts["error"] else "good"),
           ("gate", "passed" if data["ok"] else "failed", "good" if data["ok"] else "bad")]
    body = [tiles(top)]
    failures = _failures(data)
    if failures:
        body.append(card("What failed", gap_list(failures), wide=True, id="failed",
                         note="A route fails when reading the export back differs from the set in a way the "
                              "loss report does not list (or lists a loss that did not happen)."))
    body.append(card("Routes: canonical → format → canonical", _status_matrix(data) + _route_panels(data),
                     id="routes", wide=True,
                     note="ok: came back as the loss report says; lossy: loss declared and exact; "
                          "fail: a difference the report does not explain. Click a failed route for its rows."))
    order, cells = fates(data)
    body.append(card("What each format keeps, field by field", _fate_matrix(order, cells), id="fields", wide=True,
                     note="From each format's declared field map; a field dropped in this run is counted."))
    body.append(card("Dropped in this run", _dropped_table(data), id="dropped", wide=True))
    name = os.path.basename(files[0]) if len(files) == 1 else f"{len(files)} sets"
    subtitle = (f"{', '.join(files[:4])}{' …' if len(files) > 4 else ''} · {len(data['formats'])} formats"
                + (" · --strict" if data["strict"] else ""))
    return page(f"Round trip: {name}", subtitle, "".join(f'<div class="grid">{b}</div>' if b.startswith("<section")
                                                          else b for b in body), data)
