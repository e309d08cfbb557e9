"""The page kit: a shell, tiles, cards, bar charts, heat tables, gap lists, drill-downs.

Every function returns an HTML string; text goes through `esc`. See the package docstring.
"""
from __future__ import annotations

import hashlib
import html
import re
from typing import Any, Iterable, Sequence

from .. import __version__
from ..canonical import jsonvalue
from ..canonical.suggest import count as plural
from ..canonical.vocabulary import NONE_LABEL

MAX_BARS = 24        # a chart draws this many values; the rest are listed under it
MAX_TABLE_ROWS = 300  # the values listed under a chart (the embedded JSON has them all)
LABEL_CHARS = 31     # a bar label longer than this is cut (the full text is in its tooltip)
NONE_LABELS = (NONE_LABEL, "(other values)")

PALETTES = {  # value -> colour, for slices whose values have a meaning of their own
    "metadata.severity": {"cosmetic": "#e9b949", "wrong-answer": "#e8833a", "harmful": "#c7372f"},
    "fate": {"native": "#2f9e6e", "carried": "#3f6fd8", "dropped": "#c7372f"},
}
ACCENT, IMPLIED, MUTED = "#3f6fd8", "#93b0ee", "#aab1bf"

CSS = """
:root{--bg:#f4f5f8;--card:#fff;--ink:#182033;--muted:#5f6b7f;--line:#e3e6ec;--accent:#3f6fd8;
--good:#2f9e6e;--warn:#b7791f;--bad:#c7372f;--head:#131c30}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","DejaVu Sans",sans-serif}
a{color:var(--accent)}
header.top{background:var(--head);color:#fff;padding:26px 32px 54px}
header.top h1{margin:0;font-size:22px;font-weight:650;letter-spacing:-.01em}
header.top p{margin:6px 0 0;color:#b9c2d6;font-size:13px;overflow-wrap:break-word}
main{max-width:1240px;margin:0 auto;padding:0 24px 40px}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:-34px 0 22px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;
box-shadow:0 1px 2px rgba(16,24,40,.05)}
.tile .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.tile .v{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums}
.tile.good .v{color:var(--good)}.tile.warn .v{color:var(--warn)}.tile.bad .v{color:var(--bad)}
h2{font-size:16px;margin:28px 0 10px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(540px,100%),1fr));gap:16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px 12px;
min-width:0;box-shadow:0 1px 2px rgba(16,24,40,.05)}
.card h3{margin:0;font-size:14px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;
overflow-wrap:break-word}
.card .note{color:var(--muted);font-size:12px;margin:2px 0 6px}
.card.wide{grid-column:1/-1}
.grid+.grid{margin-top:16px}
tr.divider th{padding-top:14px;color:var(--ink);font-size:12px;border-bottom:1px solid #c9ced8}
.chart{margin-top:6px}
.chart .row{display:grid;grid-template-columns:minmax(0,38%) minmax(48px,1fr) auto;gap:8px;align-items:center;
padding:2px 0;color:inherit;text-decoration:none;font-size:12px}
.chart .lbl{color:#364056;text-align:right;min-width:0;overflow-wrap:break-word}
.chart .track{display:block;height:15px;background:#f0f2f6;border-radius:3px}
.chart .bar{display:block;height:100%;border-radius:3px}
.chart .stack{display:flex;overflow:hidden}
.chart .stack .bar{border-radius:0}
.chart .bar.zero{width:7px!important;height:7px;margin:4px;border-radius:50%;background:var(--bad)!important}
.chart .num{color:var(--muted);white-space:nowrap;font-variant-numeric:tabular-nums;min-width:64px}
.chart .num b{color:var(--ink)}
.chart a.row:hover .bar{opacity:.8}
.chart a.row:hover .lbl{text-decoration:underline}
.more{color:var(--muted);font-size:12px;margin:4px 0 0}
details{margin-top:6px}
summary{cursor:pointer;color:var(--accent);font-size:12px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:normal}
th{color:var(--muted);font-weight:600;font-size:12px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.heat{width:auto;min-width:50%}
table.heat th,table.heat td{vertical-align:middle}
.drill span.id,.cases span.id{white-space:nowrap}
table.heat td.cell{text-align:center;font-variant-numeric:tabular-nums;border:2px solid #fff;min-width:44px}
table.heat td.cell a{color:inherit;text-decoration:none;display:block}
table.heat td.cell a:hover{text-decoration:underline}
table.heat td.zero{color:#c3c8d2}
table.heat th.col{text-align:center;font-size:11.5px;max-width:140px}
table.heat td.total,table.heat th.total{color:var(--muted);text-align:center}
.drill{display:none;margin:10px 0 2px;border:1px solid #c9d6f5;border-radius:8px;background:#f7f9ff;padding:8px 10px}
.drill:target{display:block}
.drill .head{display:flex;gap:8px;align-items:baseline;justify-content:space-between;margin-bottom:4px}
.drill .head b{overflow-wrap:break-word}
.drill .close{font-size:12px;white-space:nowrap}
.grouped table{table-layout:fixed}
.grouped th:nth-child(1){width:26%}.grouped th:nth-child(2){width:24%}.grouped th:nth-child(3){width:64px}
.drill span.id,.drill td.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;
font-size:12px}
.drill td.where{color:var(--muted);font-size:12px;white-space:nowrap}
ul.gaps{list-style:none;margin:0;padding:0}
ul.gaps li{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:flex-start;padding:8px 2px;border-bottom:1px solid var(--line)}
ul.gaps li:last-child{border-bottom:0}
.chip{font:600 11.5px ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;padding:2px 7px;
border-radius:999px;background:#fff4e0;color:#8a5a00;white-space:nowrap}
li.bad .chip{background:#fde8e7;color:#9f2a23}
li.good .chip{background:#e3f5ec;color:#1d6b48}
ul.gaps .msg{flex:1 1 220px;min-width:0;overflow-wrap:break-word}
ul.gaps .ids{display:block;color:var(--muted);font-size:12px;margin-top:2px}
ul.gaps .count{font-variant-numeric:tabular-nums;color:var(--muted);white-space:nowrap}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin:4px 0 8px}
.legend i{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:5px;vertical-align:-1px}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;color:#fff}
footer{color:var(--muted);font-size:12px;margin-top:30px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


_BREAK_AFTER = re.compile(r"([/.=_:,|])(?=\w)")


def esc_wrap(text: Any) -> str:
    """`esc`, with a line-break opportunity (<wbr>) after the punctuation inside paths, field names
    and gate specs (`case.caseFamily=3`, `sets/a.jsonl`), so a narrow screen wraps them there and
    not inside a word. The text a script reads (textContent) is unchanged."""
    return _BREAK_AFTER.sub(r"\1<wbr>", esc(text))


def drill_id(*parts: str) -> str:
    """A safe, stable element id for a drill-down panel (any value text can be a part)."""
    digest = hashlib.sha1("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"d-{digest}"


def section_id(name: str) -> str:
    return "s-" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def embedded(data: Any) -> str:
    """The data as JSON in a script element: `<` escaped, so no text can close the element."""
    text = jsonvalue.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="evalconv-data">{text}</script>'


def page(title: str, subtitle: str, body: str, data: Any) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{esc(title)}</title><style>{CSS}</style></head><body>'
            f'<header class="top"><h1>{esc(title)}</h1><p>{esc_wrap(subtitle)}</p></header>'
            f'<main>{body}<footer>Made by evalconv {esc(__version__)}. The data behind this page is '
            f'embedded in it (<code>script#evalconv-data</code>): exactly what <code>--format json</code> '
            f'prints.</footer></main>{embedded(data)}</body></html>\n')


def tiles(items: Iterable[tuple[str, Any, str]]) -> str:
    out = "".join(f'<div class="tile {esc(tone)}" data-tile="{esc(label)}"><div class="k">{esc(label)}</div>'
                  f'<div class="v">{esc(value)}</div></div>' for label, value, tone in items)
    return f'<div class="tiles">{out}</div>'


def card(title: str, body: str, *, id: str | None = None, note: str = "", wide: bool = False) -> str:
    attrs = f' id="{esc(id)}"' if id else ""
    note_html = f'<div class="note">{note}</div>' if note else ""
    return f'<section class="card{" wide" if wide else ""}"{attrs}><h3>{esc_wrap(title)}</h3>{note_html}{body}</section>'


def grid(cards: Iterable[str]) -> str:
    return f'<div class="grid">{"".join(cards)}</div>'


def _cut(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(text.split()) if text.strip() else repr(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def bar_colour(name: str, value: str, palette: dict[str, str] | None = None) -> str:
    palette = palette if palette is not None else PALETTES.get(name, {})
    if value in palette:
        return palette[value]
    if value in NONE_LABELS:
        return MUTED
    if value.endswith(" (implied)"):
        return IMPLIED
    return ACCENT


def bar_chart(name: str, counts: dict[str, int], *, total: int, link: Any = None,
              palette: dict[str, str] | None = None, limit: int = MAX_BARS) -> str:
    """A horizontal bar chart of `counts` (value -> count), in the given order. `total` is what
    shares are taken of. `link(value)` gives the href a bar goes to (or None). The bars are HTML,
    not SVG, so the text keeps its size on a phone and a long label wraps between words."""
    items = list(counts.items())
    shown, rest = items[:limit], items[limit:]
    top = max((n for _, n in shown), default=0) or 1
    rows = []
    for value, count in shown:
        share = f"{count / total * 100:.0f}%" if total else ""
        tip = f"{value}: {plural(count, 'row')}" + (f" ({share})" if share else "")
        length = 0.0 if count == 0 else max(0.4, count / top * 100)
        bar = (f'<span class="bar{" zero" if count == 0 else ""}" style="width:{length:.1f}%;'
               f'background:{bar_colour(name, value, palette)}" data-value="{esc(value)}" data-count="{count}"></span>')
        inner = (f'<span class="lbl">{esc(_cut(value))}</span><span class="track">{bar}</span>'
                 f'<span class="num"><b class="count" data-count="{count}">{count}</b> {esc(share)}</span>')
        href = link(value) if link else None
        rows.append(f'<a class="row" href="{esc(href)}" title="{esc(tip)}">{inner}</a>' if href
                    else f'<div class="row" title="{esc(tip)}">{inner}</div>')
    chart = (f'<div class="chart" data-slice="{esc(name)}" role="img" aria-label="{esc(name)}: rows by value">'
           f'{"".join(rows)}</div>')
    if rest:
        chart += (f'<p class="more">{plural(len(rest), "more value")} ({plural(sum(n for _, n in rest), "row")}): '
                  f'see the table below.</p>')
    if len(items) > 8:
        body = [[esc(v), f'<span data-count="{n}">{n}</span>'] for v, n in items[:MAX_TABLE_ROWS]]
        cut = (f'<p class="more">The first {MAX_TABLE_ROWS} of {len(items)} values; the embedded JSON has '
               f'them all.</p>' if len(items) > MAX_TABLE_ROWS else "")
        what = f"All {len(items)} values" if len(items) <= MAX_TABLE_ROWS else f"The first {MAX_TABLE_ROWS} values"
        chart += (f'<details><summary>{what} as a table</summary>'
                f'{table(["value", "rows"], body, numeric=(1,))}{cut}</details>')
    return chart


def heat_colour(share: float) -> tuple[str, str]:
    """Background and text colour for a cell holding `share` (0..1) of the largest cell."""
    low, high = (238, 243, 253), (31, 72, 173)
    t = 0.12 + 0.88 * share ** 0.7 if share > 0 else 0
    rgb = tuple(round(a + (b - a) * t) for a, b in zip(low, high))
    return "#%02x%02x%02x" % rgb, "#fff" if t > 0.55 else "#182033"


def heat_table(row_name: str, col_name: str, counts: dict[str, dict[str, int]], columns: Sequence[str], *,
               link: Any = None) -> str:
    """A cross-tab: one row a value of `row_name`, one column a value of `col_name`, each cell
    shaded by its count; totals on the right and at the foot."""
    top = max((n for row in counts.values() for n in row.values()), default=0) or 1
    head = "".join(f'<th class="col">{esc(_cut(c, 22))}</th>' for c in columns)
    lines = [f'<tr><th>{esc(row_name)} \\ {esc(col_name)}</th>{head}<th class="total">total</th></tr>']
    col_totals = dict.fromkeys(columns, 0)
    for value, row in counts.items():
        cells = []
        for col in columns:
            n = row.get(col, 0)
            col_totals[col] += n
            if n == 0:
                cells.append('<td class="cell zero" data-count="0">·</td>')
                continue
            bg, fg = heat_colour(n / top)
            href = link(value, col) if link else None
            text = f'<a href="{esc(href)}">{n}</a>' if href else str(n)
            cells.append(f'<td class="cell" style="background:{bg};color:{fg}" data-row="{esc(value)}" '
                         f'data-col="{esc(col)}" data-count="{n}" title="{esc(value)} x {esc(col)}: {n}">{text}</td>')
        lines.append(f'<tr><th>{esc(_cut(value, 34))}</th>{"".join(cells)}'
                     f'<td class="total" data-count="{sum(row.values())}">{sum(row.values())}</td></tr>')
    foot = "".join(f'<td class="total">{n}</td>' for n in col_totals.values())
    lines.append(f'<tr><th class="total">total</th>{foot}<td class="total">{sum(col_totals.values())}</td></tr>')
    return f'<div class="scroll"><table class="heat">{"".join(lines)}</table></div>'


def gap_list(gaps: Iterable[dict[str, Any]], *, tone: str = "warn", link: Any = None) -> str:
    """Items with a `code`, a `message`, and optionally a `count` and `ids`."""
    items = []
    for gap in gaps:
        ids = gap.get("ids") or []
        shown = ", ".join(esc(i) for i in ids[:8]) + (" …" if len(ids) > 8 or gap.get("count", 0) > len(ids) > 0
                                                        else "")
        ids_html = f'<span class="ids">rows: {shown}</span>' if ids else ""
        href = link(gap) if link else None
        more = f' <a href="{esc(href)}">see the chart</a>' if href else ""
        count = (f'<span class="count" data-count="{gap["count"]}">{gap["count"]}</span>'
                 if "count" in gap else "")
        items.append(f'<li class="{esc(gap.get("tone", tone))}" data-code="{esc(gap["code"])}">'
                     f'<span class="chip">{esc(gap["code"])}</span>'
                     f'<span class="msg">{esc_wrap(gap["message"])}{more}{ids_html}</span>{count}</li>')
    return f'<ul class="gaps">{"".join(items)}</ul>'


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = ()) -> str:
    """A table; cells are HTML already (escape text with `esc`)."""
    head = "".join(f'<th class="{"n" if i in numeric else ""}">{esc(h)}</th>' for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(f'<td class="{"n" if i in numeric else ""}">{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def drill(panel_id: str, title: str, rows: Sequence[dict[str, Any]], total: int, *, back: str,
          empty: str = "The rows behind this value were not kept (see the note at the top).",
          header: Sequence[str] | None = None, cells: Sequence[Sequence[str]] | None = None) -> str:
    """The rows behind a bar or a cell, shown while targeted (CSS :target): by default id,
    input and where it was read; or `header` and `cells` (HTML) of the caller's own."""
    showing = f"showing the first {len(rows)}" if len(rows) < total else "all shown"
    if cells is not None:
        showing = plural(len(cells), "group")
        body = f'<div class="grouped">{table(list(header or []), cells)}</div>'
    elif rows:
        body = table(["id", "input", "where"],
                     ([f'<span class="id">{esc(r.get("id"))}</span>', esc(r.get("input", "")),
                       f'{esc(r.get("file", ""))}{":" + esc(r["line"]) if r.get("line") else ""}']
                      for r in rows))
    else:
        body = f'<p class="more">{esc(empty)}</p>'
    return (f'<div class="drill" id="{esc(panel_id)}" data-count="{total}"><div class="head">'
            f'<b>{esc_wrap(title)}</b><span class="more">{plural(total, "row")} · {showing}</span>'
            f'<a class="close" href="#{esc(back)}">close</a></div>{body}</div>')
