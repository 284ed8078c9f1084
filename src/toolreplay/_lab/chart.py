"""The lab's chart: the call rate per vessel and replay mode, with 95% Wilson intervals (matplotlib, Agg).

matplotlib is imported here only, when a chart is drawn (the ``lab`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolreplay._errors import ConfigError
from toolreplay._lab.summary import Summary

#: One colour per mode, the same in every chart (colour-blind safe: Okabe-Ito).
MODE_COLOURS = {"plain": "#D55E00", "prose": "#E69F00", "native": "#0072B2"}


def chart_problem() -> str | None:
    """Why no chart can be drawn here (matplotlib missing), None when it can: asked before the first
    request, so a run against a paid provider never fails only at its end."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return "the lab chart needs matplotlib: pip install 'toolreplay[lab]', or pass --no-chart"
    return None


def write_chart(summary: Summary, path: str | Path, *, title: str = "", note: str = "") -> Path:
    """Draw ``summary`` as grouped bars (vessels on the x axis, one bar per mode) into a PNG at ``path``."""
    try:
        import matplotlib
    except ImportError:
        raise ConfigError("the lab chart needs matplotlib: pip install 'toolreplay[lab]'") from None
    return _draw(summary, path, title=title, note=note, matplotlib=matplotlib)


def _draw(summary: Summary, path: str | Path, *, title: str, note: str, matplotlib: Any) -> Path:
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    vessels, modes = list(summary.vessels), list(summary.modes)
    width = 0.8 / max(1, len(modes))
    fig, ax = plt.subplots(figsize=(max(5.5, 2.6 + 1.7 * len(vessels)), 4.2), dpi=110)
    try:
        for j, mode in enumerate(modes):
            xs, rates, lows, highs, labels = [], [], [], [], []
            for i, vessel in enumerate(vessels):
                cell = summary.cell(vessel, mode)
                if cell is None or not cell.trials:
                    continue
                xs.append(i - 0.4 + width * (j + 0.5))
                rates.append(cell.rate)
                lows.append(cell.rate - cell.interval.low)
                highs.append(cell.interval.high - cell.rate)
                labels.append(f"{cell.called}/{cell.trials}")
            colour = MODE_COLOURS.get(mode, "#999999")
            ax.bar(xs, rates, width * 0.92, label=mode, color=colour, yerr=[lows, highs], capsize=3,
                   error_kw={"elinewidth": 1, "ecolor": "#333333"})  # fmt: skip
            for x, rate, label in zip(xs, rates, labels, strict=True):
                ax.text(x, min(rate + 0.03, 1.06), label, ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(vessels)), vessels)
        ax.set_ylim(0, 1.12)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
        ax.set_ylabel("trials that called the tool")
        ax.set_title(title or "call rate by replay mode (95% Wilson intervals)", fontsize=10)
        # Outside the axes, right: inside it would cover the 100% bars and their labels.
        ax.legend(
            title="replay mode", fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
            frameon=False,
        )  # fmt: skip
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout(rect=(0, 0.04, 1, 1) if note else (0, 0, 1, 1))
        if note:
            fig.text(0.99, 0.01, note, ha="right", va="bottom", fontsize=7, color="#555555")
        out = Path(path)
        fig.savefig(out, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return out


__all__ = ["MODE_COLOURS", "write_chart"]
