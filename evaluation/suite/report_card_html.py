"""The report card (``evaluation/suite/report_card.py``) as one self-contained HTML file: inline CSS, no scripts, no
external assets; every text (model, dataset, method, note, rule, error) is escaped."""
from __future__ import annotations

from html import escape

from evaluation.suite.report_card_rules import FAIL, INCONCLUSIVE, NOT_APPLICABLE, PASS

COLOURS = {PASS: "#d8f0d8", FAIL: "#f6d5d5", INCONCLUSIVE: "#fbefc8", NOT_APPLICABLE: "#e8e8e8"}
STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
         "th,td{border:1px solid #bbb;padding:4px 8px;vertical-align:top;font-size:14px}th{background:#f2f2f2}"
         ".rule{color:#555;font-size:12px}" +
         "".join(f".v-{key.replace(' ', '-')}{{background:{colour}}}" for key, colour in COLOURS.items()))


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def interval_text(row: dict, decimals: int = 3) -> str:
    """'mean [low, high]' of one card row, or '' when it has no value."""
    if row.get("mean") is None:
        return ""
    low = "?" if row.get("low") is None else f"{row['low']:.{decimals}f}"
    high = "?" if row.get("high") is None else f"{row['high']:.{decimals}f}"
    return f"{row['mean']:.{decimals}f} [{low}, {high}] (n = {row.get('n', 0)})"


def reference_text(row: dict, decimals: int = 3) -> str:
    """What the row was compared with: 'vs [low, high]' (a band) or 'vs value', '' when nothing (a fixed threshold
    is in the rule's text)."""
    low, high = row.get("reference_low"), row.get("reference_high")
    if low is None or high is None:
        return ""
    return f"vs {low:.{decimals}f}" if low == high else f"vs [{low:.{decimals}f}, {high:.{decimals}f}]"


def card_html(card: dict) -> str:
    """The whole card: header, the verdict table (methods x checks, coloured by verdict, rule under each), the
    rules, the ordering with its reasoning, errors and pending checks."""
    checks = [rule["check"] for rule in card["rules"]]
    labels = {rule["check"]: rule["label"] for rule in card["rules"]}
    by_cell = {(row["method"], row["check"]): row for row in card["rows"]}
    head = "".join(f"<th>{_e(labels[c])}</th>" for c in checks)
    body = []
    for method in card["methods"]:
        cells = []
        for check in checks:
            row = by_cell.get((method, check))
            if row is None:
                cells.append("<td>pending</td>")
                continue
            css = "v-" + row["verdict"].replace(" ", "-")
            note = f"<div class='rule'>{_e(row['note'])}</div>" if row.get("note") else ""
            cells.append(f"<td class='{css}'><b>{_e(row['verdict'])}</b> {_e(interval_text(row))} "
                         f"{_e(reference_text(row))}"
                         f"<div class='rule'>{_e(row['rule'])}</div>{note}</td>")
        body.append(f"<tr><th>{_e(method)}</th>{''.join(cells)}</tr>")
    rules = "".join(f"<tr><td>{_e(r['label'])}</td><td>{_e(r['metric'])}</td><td>{_e(r['reference'])}</td>"
                    f"<td>{_e(r['text'])}</td><td>{'yes' if r['counts'] else 'no'}</td></tr>" for r in card["rules"])
    order = "".join(f"<tr><td>{_e(o['rank'])}</td><td>{_e(o['method'])}</td><td>{_e(o['reasoning'])}</td></tr>"
                    for o in card["ordering"])
    problems = "".join(f"<li>{_e(check)}: {_e(error)}</li>" for check, error in card.get("errors", {}).items())
    problems += "".join(f"<li>{_e(check)}: not computed yet</li>" for check in card.get("pending", []))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Report card: {_e(card['model'])}</title>"
            f"<style>{STYLE}</style></head><body>"
            f"<h1>Which method should I trust for {_e(card['model'])}?</h1>"
            f"<p>Model <code>{_e(card['model'])}</code> ({_e(card.get('model_fingerprint'))}) · dataset "
            f"<code>{_e(card['dataset'])}</code> · protocol <code>{_e(card.get('protocol', 'default'))}</code> · "
            f"run {_e(card['run_id'])} · {_e(card['status'])}</p>"
            f"<h2>Verdicts</h2><table><tr><th>method</th>{head}</tr>{''.join(body)}</table>"
            f"<h2>Ordering</h2><p>{_e(card['ordering_rule'])}</p>"
            f"<table><tr><th>rank</th><th>method</th><th>reasoning</th></tr>{order}</table>"
            f"<h2>Rules</h2><table><tr><th>check</th><th>metric</th><th>compared with</th><th>rule</th>"
            f"<th>counted</th></tr>{rules}</table>"
            + (f"<h2>Not shown</h2><ul>{problems}</ul>" if problems else "") + "</body></html>\n")
