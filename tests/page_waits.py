"""Waiting on an AppTest page for a row a long document's method draws: its Run button clicked once if the
method waits for a click (a document's saliency does on a slow CPU), then reruns until the row is there."""
from __future__ import annotations

import time


def drawn_after_run(at, marker: str = 'class="xw-strip"', attempts: int = 60) -> str:
    """The page's HTML once ``marker`` appears in it (or after ``attempts`` reruns); no exception on any rerun."""
    html = ""
    for attempt in range(attempts):
        assert not at.exception, at.exception
        html = " ".join(element.proto.body for element in at.get("html"))
        if marker in html:
            break
        runs = [b for b in at.button if b.label.startswith("Run ")]
        if runs and attempt == 0:
            runs[0].click()
        time.sleep(1 if attempt else 0)
        at.run()
    return html
