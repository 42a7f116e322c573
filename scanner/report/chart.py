"""Geometry of the trend chart: stacked bars of failures per run and severity, as SVG numbers.

The template draws what this computes; nothing here produces markup, so every label still
goes through the template's escaping.
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.report.data import SEVERITY_ORDER, TrendPoint
from scanner.report.formatting import iso_time

WIDTH = 760
HEIGHT = 260
LEFT = 48
RIGHT = 12
TOP = 12
BOTTOM = 44


@dataclass(frozen=True, slots=True)
class Bar:
    """One segment of the trend chart's stacked bars: the failures of one severity in one run."""

    x: float
    y: float
    width: float
    height: float
    severity: str
    value: int
    label: str


@dataclass(frozen=True, slots=True)
class Tick:
    """One labelled line of the trend chart's scale."""

    y: float
    label: str


@dataclass(frozen=True, slots=True)
class RunLabel:
    """The label of one run under the trend chart."""

    x: float
    text: str
    title: str


@dataclass(frozen=True, slots=True)
class TrendChart:
    """The trend chart of a report, laid out for the SVG template."""

    width: int
    height: int
    left: int
    plot_bottom: float
    plot_right: float
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    run_labels: tuple[RunLabel, ...]
    severities: tuple[str, ...]


def _nice_step(maximum: int, ticks: int = 4) -> int:
    """The smallest 1/2/5 x 10^n step that covers ``maximum`` in ``ticks`` steps."""
    raw = max(1, -(-maximum // ticks))
    magnitude = 1
    while magnitude * 10 <= raw:
        magnitude *= 10
    for factor in (1, 2, 5, 10):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude


def trend_chart(points: tuple[TrendPoint, ...]) -> TrendChart:
    """Lay out one stacked bar per run (oldest left), severities stacked critical at the bottom."""
    plot_bottom = float(HEIGHT - BOTTOM)
    plot_height = plot_bottom - TOP
    plot_right = float(WIDTH - RIGHT)
    step = _nice_step(max((p.total for p in points), default=0))
    top_value = step * 4
    slot = (plot_right - LEFT) / max(len(points), 1)
    bar_width = max(2.0, min(36.0, slot * 0.7))
    bars: list[Bar] = []
    labels: list[RunLabel] = []
    every = max(1, -(-len(points) // 16))
    for index, point in enumerate(points):
        x = LEFT + slot * index + (slot - bar_width) / 2
        base = plot_bottom
        when = iso_time(point.started_at)
        for severity in SEVERITY_ORDER:
            value = int(point.failures.get(severity, 0))
            if value <= 0:
                continue
            height = plot_height * value / top_value
            base -= height
            bars.append(Bar(x=round(x, 2), y=round(base, 2), width=round(bar_width, 2),
                            height=round(height, 2), severity=severity, value=value,
                            label=f"run {point.run_id} ({when}): {value} {severity}"))
        last = index == len(points) - 1
        if index % every == 0 or (last and index % every > every // 2):
            labels.append(RunLabel(x=round(x + bar_width / 2, 2), text=f"#{point.run_id}",
                                   title=when))
    ticks = tuple(Tick(y=round(plot_bottom - plot_height * i / 4, 2), label=str(step * i))
                  for i in range(5))
    present = {b.severity for b in bars}
    return TrendChart(width=WIDTH, height=HEIGHT, left=LEFT, plot_bottom=plot_bottom,
                      plot_right=plot_right, bars=tuple(bars), ticks=ticks,
                      run_labels=tuple(labels),
                      severities=tuple(s for s in SEVERITY_ORDER if s in present))
