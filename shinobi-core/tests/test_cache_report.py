"""``ninja report`` on steps whose names differ only in characters an HTML id does
not hold."""

from __future__ import annotations

import re

from shinobi.render.report_html import render_report


def test_steps_named_alike_get_sections_of_their_own() -> None:
    step = {"status": "ok", "started": 101.0, "finished": 102.0, "deps": [], "logs": {}}
    names = ["cal ms", "cal:ms", "cal_ms", 'cal"ms']
    manifest = {
        "format": 1,
        "run_id": "r1",
        "status": "ok",
        "started": 100.0,
        "finished": 103.0,
        "recipe": {"name": "x"},
        "graph": {"nodes": [{"name": n, "deps": []} for n in names]},
        "steps": [{**step, "name": n} for n in names],
    }
    page = render_report(manifest, "..")
    ids = re.findall(r'<details id="([^"]+)"', page)
    assert len(ids) == len(names) == len(set(ids))  # every link opens its own step
    assert 'id="step-cal_ms"' in page  # a plain name keeps its readable id
    for anchor in ids:  # and every link on the page leads to one of them
        assert f'href="#{anchor}"' in page
