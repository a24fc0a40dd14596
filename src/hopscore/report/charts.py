"""Inline SVG bar charts with error bars (no scripts, no external resources)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hopscore.analysis.confidence import Bin as ReliabilityBin

PALETTE = ("#3b6ea8", "#d9822b", "#4f9a5a", "#b4485b", "#7a5ea8", "#8c7a4c", "#3a9aa3", "#777")
WIDTH = 560
PLOT_HEIGHT = 200
TOP, LEFT, BOTTOM = 24, 44, 70


@dataclass(frozen=True, slots=True)
class Bar:
    series: str
    value: float
    low: float | None
    high: float | None
    n: int | None = None


@dataclass(frozen=True, slots=True)
class Cluster:
    label: str
    bars: list[Bar]


def _y(value: float, top: float) -> float:
    return TOP + PLOT_HEIGHT * (1 - min(max(value / top, 0.0), 1.0))


def bar_chart(title: str, clusters: list[Cluster], series: list[str]) -> str:
    """Grouped bars (one cluster per group, one bar per series) in percent, with CI whiskers."""
    if not clusters or not series:
        return ""
    highest = max((b.high if b.high is not None else b.value) for c in clusters for b in c.bars)
    top = 1.0 if highest > 0.5 or highest <= 0 else max(0.1, round(highest * 1.2 + 0.049, 1))
    slot = (WIDTH - LEFT - 10) / len(clusters)
    bar_width = max(3.0, min(28.0, (slot - 10) / len(series)))
    height = TOP + PLOT_HEIGHT + BOTTOM
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{LEFT}" y="14" class="chart-title">{escape(title)}</text>',
    ]
    for tick in range(6):
        value = top * tick / 5
        y = _y(value, top)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     'class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="tick" '
                     f'text-anchor="end">{100 * value:.0f}</text>')
    for index, cluster in enumerate(clusters):
        x0 = LEFT + index * slot + (slot - bar_width * len(series)) / 2
        for bar in cluster.bars:
            k = series.index(bar.series)
            x = x0 + k * bar_width
            y = _y(bar.value, top)
            colour = PALETTE[k % len(PALETTE)]
            label = f"{bar.series} · {cluster.label}: {100 * bar.value:.2f}"
            if bar.low is not None and bar.high is not None:
                label += f" (95% CI {100 * bar.low:.2f}–{100 * bar.high:.2f})"
            if bar.n is not None:
                label += f", n={bar.n}"
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_width - 2:.1f}" '
                f'height="{TOP + PLOT_HEIGHT - y:.1f}" fill="{colour}">'
                f"<title>{escape(label)}</title></rect>"
            )
            if bar.low is not None and bar.high is not None:
                cx = x + (bar_width - 2) / 2
                y_low, y_high = _y(bar.low, top), _y(bar.high, top)
                parts.append(
                    f'<path class="whisker" d="M{cx:.1f} {y_low:.1f}V{y_high:.1f}'
                    f"M{cx - 4:.1f} {y_low:.1f}h8M{cx - 4:.1f} {y_high:.1f}h8\"/>"
                )
        text = cluster.label if len(cluster.label) <= 18 else cluster.label[:17] + "…"
        cx = LEFT + index * slot + slot / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{TOP + PLOT_HEIGHT + 16}" class="tick" text-anchor="middle">'
            f"{escape(text)}</text>"
        )
    legend_y = height - 14
    x = LEFT
    for k, name in enumerate(series):
        parts.append(f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" '
                     f'fill="{PALETTE[k % len(PALETTE)]}"/>')
        parts.append(f'<text x="{x + 14}" y="{legend_y}" class="tick">{escape(name)}</text>')
        x += 24 + 7 * min(len(name), 30)
    parts.append("</svg>")
    return "".join(parts)


def reliability_diagram(title: str, bins: Sequence[ReliabilityBin]) -> str:
    """A reliability diagram: per bin, a bar to its accuracy at its confidence range, a dot at
    its mean confidence, and the diagonal a calibrated system lies on (percent axes)."""
    size = PLOT_HEIGHT
    left, top = LEFT, TOP
    width, height = left + size + 20, top + size + 24

    def x(value: float) -> float:
        return left + size * min(max(value, 0.0), 1.0)

    def y(value: float) -> float:
        return top + size * (1 - min(max(value, 0.0), 1.0))

    parts = [
        f'<svg class="chart reliability" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{3 * width // 2}px" role="img" aria-label="{escape(title)}" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<text x="4" y="14" class="chart-title">{escape(title)}</text>',
    ]
    for tick in range(6):
        value = tick / 5
        parts.append(f'<line x1="{left}" x2="{left + size}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" class="tick" '
                     f'text-anchor="end">{100 * value:.0f}</text>')
        parts.append(f'<text x="{x(value):.1f}" y="{top + size + 16}" class="tick" '
                     f'text-anchor="middle">{100 * value:.0f}</text>')
    for b in bins:
        if not b.n or b.accuracy is None or b.confidence is None:
            continue
        label = (f"confidence {100 * b.low:.0f}–{100 * b.high:.0f}: n={b.n}, mean confidence "
                 f"{100 * b.confidence:.1f}, accuracy {100 * b.accuracy:.1f}")
        parts.append(f'<rect x="{x(b.low) + 1:.1f}" y="{y(b.accuracy):.1f}" '
                     f'width="{max(x(b.high) - x(b.low) - 2, 1.0):.1f}" '
                     f'height="{top + size - y(b.accuracy):.1f}" fill="{PALETTE[0]}" '
                     f'fill-opacity="0.8"><title>{escape(label)}</title></rect>')
        parts.append(f'<circle cx="{x(b.confidence):.1f}" cy="{y(b.accuracy):.1f}" r="3" '
                     f'fill="{PALETTE[1]}"><title>{escape(label)}</title></circle>')
    parts.append(f'<path class="whisker" stroke-dasharray="4 3" '
                 f'd="M{x(0):.1f} {y(0):.1f}L{x(1):.1f} {y(1):.1f}"/>')
    parts.append("</svg>")
    return "".join(parts)
