"""A diff report as text (a terminal) and as markdown (a pull-request comment): the same dict
`--format json` prints, drawn."""
from __future__ import annotations

from typing import Any

SHOWN = 50  # cases listed per kind in text and markdown; JSON has them all


def _summary(counts: dict[str, int]) -> str:
    parts = [f"{counts.get('added', 0)} added", f"{counts.get('removed', 0)} removed"]
    if counts.get("retired"):
        parts[-1] += f" ({counts['retired']} retired)"
    parts += [f"{counts.get('changed', 0)} changed", f"{counts.get('unchanged', 0)} unchanged"]
    if counts.get("migrated"):
        parts.append(f"{counts['migrated']} migrated")
    return ", ".join(parts)


def _finding_line(f: dict[str, Any]) -> str:
    where = f.get("source") or ""
    if f.get("line") is not None:
        where += f":{f['line']}"
    who = f"row {f['row']}" if f.get("row") is not None else ""
    if f.get("id"):
        who += f" ({f['id']})"
    head = " ".join(p for p in (where + ":" if where else "", who, f["path"]) if p)
    return f"{head}: {f['severity']}[{f['code']}]: {f['message']}"


def _name(s: dict[str, Any]) -> str:
    base, head = s["base"] or "(none)", s["head"] or "(none)"
    return f"{base} -> {head}" if base != head else head


def text(data: dict[str, Any]) -> str:
    out = []
    for s in data["sets"]:
        out.append(f"{_name(s)}: {_summary(s['counts'])}")
        for entry in s["added"][:SHOWN]:
            out.append(f"  + {entry['id']} (row {entry['row']})")
        for entry in s["removed"][:SHOWN]:
            retired = entry.get("retired")
            note = f"  retired {retired['date']}: {retired['reason']}" if retired else ""
            out.append(f"  - {entry['id']}{note}")
        for change in s["changed"][:SHOWN]:
            out.append(f"  ~ {change['id']} (row {change['row']})")
            out += [f"      {f['path']}: {f['old']} -> {f['new']}" for f in change["fields"]]
            if change["more_fields"]:
                out.append(f"      ... and {change['more_fields']} more fields")
        for kind in ("added", "removed", "changed"):
            if len(s[kind]) > SHOWN:
                out.append(f"  ... and {len(s[kind]) - SHOWN} more {kind} (--format json lists them all)")
        out += [_finding_line(f) for f in s["findings"][:SHOWN]]
        if len(s["findings"]) > SHOWN:
            out.append(f"  ... and {len(s['findings']) - SHOWN} more findings (--format json lists them all)")
    if len(data["sets"]) > 1:
        out.append(f"in all: {_summary(data['counts'])}")
    if data["failed"]:
        codes = sorted({f["code"] for f in data["failed"]})
        out.append(f"FAILED: {len(data['failed'])} finding(s) with --fail-on {', '.join(codes)}")
    return "\n".join(out)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ").replace("`", "'")


def markdown(data: dict[str, Any]) -> str:
    out = ["## evalconv diff", "", f"**{_summary(data['counts'])}**" + (
        f", {len(data['failed'])} finding(s) fail the check (`--fail-on {' '.join(data['fail_on'])}`)"
        if data["failed"] else ""), ""]
    if data["findings_by_code"]:
        out += ["| finding | cases |", "|---|---|"]
        out += [f"| `{code}` | {n} |" for code, n in data["findings_by_code"].items()]
        out.append("")
    for s in data["sets"]:
        out += [f"### `{_cell(_name(s))}`", "", _summary(s["counts"]), ""]
        if s["findings"]:
            out += ["| case | code | path | message |", "|---|---|---|---|"]
            out += [f"| `{_cell(f.get('id') or '(set)')}` | `{f['code']}` | `{_cell(f['path'])}` | {_cell(f['message'])} |"
                    for f in s["findings"][:SHOWN]]
            if len(s["findings"]) > SHOWN:
                out.append(f"| … | | | and {len(s['findings']) - SHOWN} more |")
            out.append("")
        details = []
        details += [f"- added `{_cell(e['id'])}`" for e in s["added"][:SHOWN]]
        for e in s["removed"][:SHOWN]:
            retired = e.get("retired")
            details.append(f"- removed `{_cell(e['id'])}`" + (
                f" (retired {_cell(retired['date'])}: {_cell(retired['reason'])})" if retired else ""))
        for c in s["changed"][:SHOWN]:
            details.append(f"- changed `{_cell(c['id'])}`")
            details += [f"  - `{_cell(f['path'])}`: `{_cell(f['old'])}` → `{_cell(f['new'])}`" for f in c["fields"]]
        if details:
            out += ["<details><summary>cases</summary>", "", *details, "", "</details>", ""]
    return "\n".join(out).rstrip() + "\n"
