"""The pictures of a student's report, as inline SVG: a failing case's computation graph, and the training curve."""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from grader.feedback import SAME, numbers
from grader.render.templating import ENV


def _fmt(x: Any, other: Any = None) -> str:
    return numbers(x, other, close=SAME)[0]


def graph_svg(graph: dict[str, Any]) -> Markup:
    """A picture of the counterexample's computation graph: each node with its data and
    gradient; a wrong number is marked and the expected value written beside it."""
    nodes = graph["nodes"]
    by_id = {n["id"]: n for n in nodes}
    level: dict[int, int] = {}
    for n in nodes:
        level[n["id"]] = 1 + max((level[i] for i in n["inputs"] if i in level), default=-1)
    columns: dict[int, list[int]] = {}
    for n in nodes:
        columns.setdefault(level[n["id"]], []).append(n["id"])
    box_w, box_h, gap_x, gap_y, op_r = 250, 62, 90, 26, 17
    pos = {}
    for col, ids in columns.items():
        for row, node_id in enumerate(ids):
            pos[node_id] = (20 + col * (box_w + gap_x) + (gap_x if col else 0), 20 + row * (box_h + gap_y))
    width = max(x for x, _ in pos.values()) + box_w + 20
    height = max(y for _, y in pos.values()) + box_h + 20
    items = []
    for n in nodes:
        x, y = pos[n["id"]]
        wrong_data = not _same(n["data"], n["expected_data"])
        wrong_grad = "grad" in n and not _same(n["grad"], n["expected_grad"])
        grad_line = ""
        if "grad" in n:
            grad_line = f"grad {_fmt(n['grad'], n['expected_grad'])}" + (
                f"  ✗ expected {_fmt(n['expected_grad'], n['grad'])}" if wrong_grad else ""
            )
        data_line = f"data {_fmt(n['data'], n['expected_data'])}" + (
            f"  ✗ expected {_fmt(n['expected_data'], n['data'])}" if wrong_data else ""
        )
        cx, cy = x - gap_x / 2, y + box_h / 2
        sources = [i for i in n["inputs"] if i in by_id]
        edges = []
        for k, i in enumerate(sources):  # a value used twice by one operation (a + a) gets two edges, bent apart
            twins = sources.count(i)
            bend = 0.0 if twins == 1 else (sources[:k].count(i) - (twins - 1) / 2) * 36
            ex, ey = pos[i][0] + box_w, pos[i][1] + box_h / 2
            edges.append(
                {
                    "d": f"M {ex:.1f} {ey:.1f} Q {(ex + cx) / 2:.1f} {(ey + cy) / 2 + bend:.1f} {cx:.1f} {cy:.1f}",
                    "source": by_id[i]["name"],
                }
            )
        items.append(
            {
                "x": x,
                "y": y,
                "name": n["name"],
                "data": data_line,
                "grad": grad_line,
                "wrong": wrong_data or wrong_grad,
                "op": n["op"],
                "cx": cx,
                "cy": cy,
                "edges": edges,
            }
        )
    svg = ENV.get_template("graph.svg.j2").render(
        items=items, width=width, height=height, box_w=box_w, box_h=box_h, op_r=op_r
    )
    return Markup(svg)


def _same(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def curve_svg(artifacts: dict[str, Any]) -> Markup:
    """Loss per step, the student's solid and the reference's dashed, each labelled."""
    student = [x if isinstance(x, float) and math.isfinite(x) else None for x in artifacts["student_loss"]]
    reference = artifacts["reference_loss"]
    finite = [x for x in student + reference if x is not None]
    top = max(finite, default=0.0)
    top = top if top > 0 else 1.0  # every loss 0 (or none finite): any scale will do
    width, height, pad = 560, 260, 44
    steps = max(len(student), len(reference), 2)

    def points(series):
        return " ".join(
            f"{pad + i * (width - 2 * pad) / (steps - 1):.1f},"
            f"{height - pad - (min(v, top) / top) * (height - 2 * pad):.1f}"
            for i, v in enumerate(series)
            if v is not None
        )

    threshold = artifacts.get("threshold")
    threshold_y = height - pad - (threshold / top) * (height - 2 * pad) if threshold and threshold < top else None
    return Markup(
        ENV.get_template("curve.svg.j2").render(
            width=width,
            height=height,
            pad=pad,
            top=top,
            steps=steps,
            student=points(student),
            reference=points(reference),
            threshold=threshold,
            threshold_y=threshold_y,
            divergence=artifacts.get("first_divergence"),
        )
    )
