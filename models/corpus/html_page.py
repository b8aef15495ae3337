"""The coverage report as one self-contained HTML page (issue 39): no script, no
network, plots drawn as inline SVG. Every piece of text from saves or content goes
through ``sinks.html``.

Plots: coverage per content file (lines that fired, cards included, out of those the
file holds), the final relationship scores per NPC (how many saves end in each band
of ten points), findings per code.
"""

from __future__ import annotations

from narrative_debugger.models.corpus.coverage import ELIGIBLE_UNCHOSEN, NO_LONGER_THERE, LineTally, missing_note
from narrative_debugger.models.report.sinks import html

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
code{font:12px ui-monospace,monospace;background:#f3f3f3;padding:1px 3px}
svg text{font:11px system-ui,sans-serif;fill:#1b1b1b}
.muted{color:#666}
"""

BAR_H = 18


def _bars(rows: list[tuple[str, float, float | None, str]], width: int = 640) -> str:
    """Horizontal bars: (label, value, full, note) each; the bar is value/full of the width.
    ``full`` None: no share to draw (cards not counted, ids in no content folder): a
    dashed empty outline, the note in grey, so the row does not read as a count."""
    label_w, bar_w = 220, width - 300
    height = BAR_H * len(rows) + 4
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for k, (label, value, full, note) in enumerate(rows):
        y = k * BAR_H + 2
        out.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{html(label)}</text>')
        if full is None:
            out.append(f'<rect x="{label_w}" y="{y + 2}" width="{bar_w}" height="{BAR_H - 5}" fill="none" stroke="#999" stroke-dasharray="4 3"/>')
            out.append(f'<text x="{label_w + 6}" y="{y + 13}" style="fill:#666">{html(note)}</text>')
            continue
        share = value / full if full else 0.0
        out.append(f'<rect x="{label_w}" y="{y + 2}" width="{bar_w}" height="{BAR_H - 5}" fill="#e6e6e6"/>')
        out.append(f'<rect x="{label_w}" y="{y + 2}" width="{bar_w * share:.1f}" height="{BAR_H - 5}" fill="#3b7dd8"/>')
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 13}">{html(note)}</text>')
    out.append("</svg>")
    return "".join(out)


def _histograms(scores: dict[str, list[float]]) -> str:
    """One row of ten bins (0-10 … 90-100 points) per NPC, bar heights by count of saves."""
    if not scores:
        return '<p class="muted">No NPC in any readable save.</p>'
    label_w, bin_w, row_h = 160, 36, 56
    width = label_w + bin_w * 10 + 20
    height = row_h * len(scores) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for k, (slug, values) in enumerate(scores.items()):
        bins = [0] * 10
        for v in values:
            bins[min(9, max(0, int(v // 10)))] += 1
        top = max(bins) or 1
        base = k * row_h + row_h - 8
        out.append(f'<text x="{label_w - 6}" y="{base - 4}" text-anchor="end">{html(slug)} ({len(values)})</text>')
        for b, n in enumerate(bins):
            h = (row_h - 16) * n / top
            x = label_w + b * bin_w
            out.append(f'<rect x="{x + 2}" y="{base - h:.1f}" width="{bin_w - 4}" height="{h:.1f}" fill="#d8803b"><title>{b * 10}-{b * 10 + 10}: {n}</title></rect>')
        out.append(f'<line x1="{label_w}" y1="{base}" x2="{label_w + bin_w * 10}" y2="{base}" stroke="#999"/>')
    y = height - 4
    for b in range(0, 11, 2):
        out.append(f'<text x="{label_w + b * bin_w}" y="{y}" text-anchor="middle">{b * 10}</text>')
    out.append("</svg>")
    return "".join(out)


def coverage_page(doc: dict, line_files: dict[str, str], card_files: dict[str, str], scores: dict[str, list[float]],
                  commands: dict[str, tuple[str, str]], unprompted: tuple[int, int], tally: LineTally) -> str:
    """The page: summary, the three plots, the never-fired lines with their nearest
    misses and the commands that open them, and the tables of cards and transitions.
    Cards not counted (``doc``'s counts null: every save indexed with --no-prompts) and
    ids in no content folder are rows without a bar, saying so; a nearest miss in a save
    of ``doc["missing_saves"]`` says it is no longer there and has no command.

    Args:
        doc: ``coverage()``'s document.
        line_files, card_files: item id -> content file.
        scores: NPC slug -> final scores (0..100), one per save.
        commands: line id -> (open command, why command) of its nearest miss.
        unprompted: ``(without, readable)`` saves indexed with ``--no-prompts``, whose
            story cards were not counted (``coverage.saves_without_prompts``): said above
            the cards' table.
        tally: ``coverage.line_tally``: the summary counts content lines; ids fired that
            no content folder defines are named beside it.
    """
    counted = all(e["included"] is not None for e in doc["cards"].values())
    per_file: dict[str, list[int]] = {}
    elsewhere = 0  # ids fired or included that no content folder defines (M002)
    for line_id, e in doc["lines"].items():
        if line_id not in line_files:
            elsewhere += 1
            continue
        entry = per_file.setdefault(line_files[line_id], [0, 0])
        entry[0] += e["fired"] > 0
        entry[1] += 1
    lore: dict[str, int] = {}
    for card_id, e in doc["cards"].items():
        if card_id not in card_files:
            elsewhere += 1
        elif not counted:
            lore[card_files[card_id]] = lore.get(card_files[card_id], 0) + 1
        else:
            entry = per_file.setdefault(card_files[card_id], [0, 0])
            entry[0] += e["included"] > 0
            entry[1] += 1
    file_rows: list[tuple[str, float, float | None, str]] = [(name, hit, total, f"{hit} of {total}") for name, (hit, total) in sorted(per_file.items())]
    file_rows += [(name, 0, None, f"{n} card(s), not counted: indexed with --no-prompts") for name, n in sorted(lore.items())]
    if elsewhere:
        file_rows.append(("(in no content folder)", 0, None, f"{elsewhere} id(s) fired, defined nowhere (M002): not coverage"))
    codes = sorted(((k, e) for k, e in doc["codes"].items() if e["count"]), key=lambda kv: (-kv[1]["count"], kv[0]))
    top = max((e["count"] for _, e in codes), default=0)
    code_rows = [(k, e["count"], top, f"{e['count']} in {e['saves']} save(s)") for k, e in codes]
    never = [(k, e) for k, e in doc["lines"].items() if e["fired"] == 0]
    gone = set(doc["missing_saves"])
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>Coverage</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>Coverage of {doc['saves']} save(s)</h1>",
             f"<p>Monologue lines fired: {tally.fired} of {tally.total}. "
             + (f"Story cards included: {sum(1 for e in doc['cards'].values() if e['included'])} of {len(doc['cards'])}.</p>" if counted
                else f"Story cards ({len(doc['cards'])}): not counted: indexed with --no-prompts.</p>"),
             *([f"<p>Fired but in no content folder (M002): {', '.join(f'<code>{html(k)}</code>' for k in tally.not_in_content)}.</p>"]
               if tally.not_in_content else []),
             *([f"<p>{missing_note(doc['missing_saves'], ', '.join(f'<code>{html(k)}</code>' for k in doc['missing_saves']))}.</p>"]
               if gone else []),
             "<h2>Coverage per content file</h2>", _bars(file_rows) if file_rows else '<p class="muted">No content.</p>',
             "<h2>Final relationship score per NPC</h2>", _histograms(scores),
             "<h2>Findings per code</h2>", _bars(code_rows) if code_rows else '<p class="muted">No findings.</p>',
             "<h2>Lines that never fired</h2>"]
    if never:
        parts.append("<table><tr><th>line</th><th>nearest miss</th><th>failing clauses</th><th>open it there</th></tr>")
        for line_id, e in never:
            miss = e["nearest_miss"]
            if miss is None:
                parts.append(f"<tr><td><code>{html(line_id)}</code></td><td colspan=3 class=muted>none (no prerequisites, or no readable save)</td></tr>")
                continue
            failing = "<br>".join(html(c) for c in miss["failing"]) or html(ELIGIBLE_UNCHOSEN)
            if miss["save"] in gone:
                where, opened = f"{html(miss['save'])} ({NO_LONGER_THERE})", '<span class="muted">cannot be opened</span>'
            else:
                where, opened = html(miss["save"]), "<br>".join(f"<code>{html(c)}</code>" for c in commands.get(line_id, ()))
            parts.append(f"<tr><td><code>{html(line_id)}</code></td><td>{where} at tick {miss['tick']}</td>"
                         f"<td>{failing}</td><td>{opened}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>Every line fired at least once.</p>")
    parts.append("<h2>Story cards</h2>")
    if unprompted[0]:
        parts.append(f'<p class="muted">Story cards were not counted in {unprompted[0]} of {unprompted[1]} readable save(s): '
                     "indexed with --no-prompts (run corpus again without it).</p>")
    parts.append("<table><tr><th>card</th><th>included</th><th>dropped</th><th>saves</th></tr>")
    if counted:
        parts += [f"<tr><td><code>{html(k)}</code></td><td>{e['included']}</td><td>{e['dropped']}</td><td>{e['saves']}</td></tr>" for k, e in doc["cards"].items()]
    else:
        parts += [f'<tr><td><code>{html(k)}</code></td><td colspan=3 class=muted>not counted</td></tr>' for k in doc["cards"]]
    parts.append("</table><h2>Transitions</h2><table><tr><th>move</th><th>count</th><th>saves</th></tr>")
    parts += [f"<tr><td>{html(k)}</td><td>{e['count']}</td><td>{e['saves']}</td></tr>" for k, e in doc["transitions"].items()]
    parts.append("</table></body></html>\n")
    return "\n".join(parts)
