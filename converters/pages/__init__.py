"""Self-contained HTML pages from the dicts the commands print with `--format json`.

A page is one file: inline CSS, HTML bar charts (SVG for the run page's stacked bars), no script needed to read it, no network,
no external fonts. The data comes first: a page is rendered from exactly the dict `--format
json` prints, and embeds that dict as `<script type="application/json" id="evalconv-data">`,
so what the page shows can be checked against it (the browser tests do).

The kit (`evalconv.pages.kit`), for any command's page:

    page(title, subtitle, body, data)   the shell: styles, header, footer, embedded data
    tiles([(label, value, tone)])       the headline numbers (tone: "", "good", "warn", "bad")
    card(title, body, id=, note=)       a titled panel; `grid(cards)` lays them out
    bar_chart(name, counts, ...)        a horizontal bar chart (HTML), one bar a value; each bar
                                        links to its drill-down panel (`drill_id(name, value)`)
    heat_table(rows, cols, counts, ...) a cross-tab as an HTML table shaded by count
    gap_list(gaps)                      coverage gaps or failures: code chip, message, count
    drill(id, title, rows, total)       the rows behind a bar or cell, shown when its link is
                                        followed (CSS :target), closed by a link back
    table(header, rows)                 a plain table; `esc` escapes text for HTML

Numbers the tests read carry `data-count` (and `data-value` / `data-slice`) attributes.

The pages: `stats_page.render(stats_json)` and `roundtrip_page.render(roundtrip_json)`.
"""
from __future__ import annotations

from .kit import bar_chart, card, drill, drill_id, esc, gap_list, grid, heat_table, page, table, tiles

__all__ = ["bar_chart", "card", "drill", "drill_id", "esc", "gap_list", "grid", "heat_table", "page",
           "table", "tiles"]
