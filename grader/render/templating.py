"""The jinja2 environment every page is made with (autoescaping on) and its filters: points, numbers, and prose
(text written for the terminal, as HTML)."""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup, escape

from grader.feedback import SAME, numbers
from grader.final import points

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("grader.render", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["points"] = points
ENV.filters["number"] = lambda x, other=None: numbers(x, other, close=SAME)[0] if isinstance(x, float) else x


def prose(text: Any) -> Markup:
    """Text written for the terminal, as HTML: escaped, and each `code` span (a pair of backticks on one line)
    a <code> element, so no page shows a raw backtick the grader wrote. A lone backtick (a student's) stays."""
    lines = []
    for line in str(text).split("\n"):
        parts = line.split("`")
        if len(parts) % 2 == 0:  # an odd number of backticks: the last one has no pair
            parts[-2:] = [parts[-2] + "`" + parts[-1]]
        lines.append(
            Markup("").join(escape(p) if i % 2 == 0 else Markup("<code>%s</code>") % p for i, p in enumerate(parts))
        )
    return Markup("\n").join(lines)


ENV.filters["prose"] = prose
