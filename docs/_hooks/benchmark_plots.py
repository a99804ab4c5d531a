"""MkDocs build hook: draws the benchmark plots from the data files in docs/benchmarks/.

The data files are the only source of the figures. Each plot is an SVG added to the site as a
generated file under benchmarks/plots/, so pages link it like any other image and --strict checks
those links.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure

PLOTS_DIR = "benchmarks/plots"
TIER_COLOURS = {"hot": "#e8590c", "warm": "#d4a106", "archive": "#64748b"}
DEFAULT_BACKEND = "onnx-int8"
VECTOR_PATHS = {"exact": "exact", "hnsw": "HNSW"}

matplotlib.rcParams.update(
    {
        "svg.hashsalt": "kybernesis",  # stable ids, so an unchanged data file gives an unchanged SVG
        "svg.fonttype": "none",  # text stays text, in the reader's sans-serif font
        "font.family": "sans-serif",
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
)


def load(data_dir: Path, name: str) -> dict:
    return json.loads((data_dir / f"{name}.json").read_text(encoding="utf-8"))


def latest(rows: list[dict], keep: Callable[[dict], bool] = lambda figures: True) -> dict | None:
    """The figures of the newest row whose figures pass `keep` (rows of one date keep file order)."""
    chosen = None
    for row in rows:
        if keep(row["figures"]) and (chosen is None or row["date"] >= chosen["date"]):
            chosen = row
    return chosen["figures"] if chosen else None


def search_latency(data_dir: Path) -> Figure:
    """p50, p95 and p99 of hybrid search against the owner's chunk count, as the product searches."""
    data = load(data_dir, "bench_search")
    sizes = sorted({row["figures"]["chunks"] for row in data["rows"]})
    points = []
    for size in sizes:
        figures = latest(
            data["rows"], lambda f, size=size: f["chunks"] == size and f["product_choice"] and "p50_ms" in f
        )
        if figures:
            points.append(figures)
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.subplots()
    xs = [p["chunks"] for p in points]
    for key, label, style in (("p50_ms", "p50", "o-"), ("p95_ms", "p95", "s-"), ("p99_ms", "p99", "^-")):
        ax.plot(xs, [p[key] for p in points], style, label=label)
    for p in points:
        ax.annotate(
            VECTOR_PATHS[p["vector_search"]],
            (p["chunks"], p["p99_ms"]),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=8,
            color="#555",
        )
    ax.axhline(data["target"]["p95_ms"], color="#b91c1c", linestyle="--", linewidth=1, label="p95 target")
    ax.set_xscale("log")
    ax.set_xticks(xs, [f"{x:,}" for x in xs])
    ax.set_xlabel("chunks of the searching owner")
    ax.set_ylabel("ms per search")
    ax.set_ylim(0, max(data["target"]["p95_ms"], *(p["p99_ms"] for p in points)) * 1.2)
    ax.set_title("Hybrid search latency against collection size")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def tiers_over_time(data_dir: Path) -> Figure:
    """Memories per tier at the end of each week of the 90-day simulation, stacked."""
    weeks = [row["figures"] for row in load(data_dir, "simulate_usage")["rows"]]
    fig = Figure(figsize=(6.4, 3.4))
    ax = fig.subplots()
    xs = [w["week"] for w in weeks]
    bottom = [0] * len(weeks)
    for tier in ("hot", "warm", "archive"):
        heights = [w[tier] for w in weeks]
        ax.bar(xs, heights, bottom=bottom, color=TIER_COLOURS[tier], label=tier, width=0.7)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(xs)
    ax.set_xlabel("week")
    ax.set_ylabel("memories")
    ax.set_title("Tiers over a simulated 90 days")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    return fig


def retrieval_quality(data_dir: Path) -> Figure:
    """The retrieval figures of each labelled data set, with the default embedding backend."""

    def default(figures: dict) -> bool:
        return figures.get("backend", DEFAULT_BACKEND) == DEFAULT_BACKEND

    scifact = latest(load(data_dir, "bench_retrieval")["rows"], default)
    personal = latest(load(data_dir, "bench_personal")["rows"], default)
    bars = [
        ("SciFact", "nDCG@10", scifact["ndcg_at_10"]),
        ("SciFact", "nDCG@10, limit 10 + floor", scifact["ndcg_at_10_floor"]),
        ("SciFact", "recall@100", scifact["recall_at_100"]),
        ("SciFact", "vector-only nDCG@10", scifact["vector_only_ndcg_at_10"]),
        ("personal", "top-1", personal["top1"]),
        ("personal", "MRR@10", personal["mrr_at_10"]),
        ("personal", "nDCG@5", personal["ndcg_at_5"]),
        ("personal", "no-answer queries empty", personal["no_answer_empty"]),
    ]
    colours = {"SciFact": "#0f766e", "personal": "#7c3aed"}
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [b[2] for b in bars], color=[colours[b[0]] for b in bars], height=0.65)
    for y, (_, _, value) in zip(ys, bars, strict=True):
        ax.text(value + 0.01, y, f"{value:g}", va="center", fontsize=8)
    ax.set_yticks(ys, [f"{data_set}: {metric}" for data_set, metric, _ in bars])
    ax.set_xlim(0, 1.08)
    ax.set_xlabel("score (1 is perfect)")
    ax.set_title("Retrieval quality per data set")
    return fig


PLOTS: dict[str, Callable[[Path], Figure]] = {
    "search-latency": search_latency,
    "tiers-90-days": tiers_over_time,
    "retrieval-quality": retrieval_quality,
}


def render(draw: Callable[[Path], Figure], data_dir: Path) -> str:
    fig = draw(data_dir)
    fig.set_layout_engine("constrained")
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def on_files(files, config):
    """Add each plot to the site's files, drawn from the data as it is now."""
    from mkdocs.structure.files import File

    data_dir = Path(config["docs_dir"]) / "benchmarks"
    for name, draw in PLOTS.items():
        files.append(File.generated(config, f"{PLOTS_DIR}/{name}.svg", content=render(draw, data_dir)))
    return files
