"""MkDocs build hook: the benchmark plots and tables, drawn from the data files in docs/benchmarks/.

The data files are the only source of the figures. Each plot is an SVG added to the site as a
generated file under benchmarks/plots/, so pages link it like any other image and --strict checks
those links. A page line `<!-- benchmark: NAME -->` becomes the table of NAME.json's rows.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import ticker
from matplotlib.figure import Figure

PLOTS_DIR = "benchmarks/plots"
TIER_COLOURS = {"hot": "#e8590c", "warm": "#d4a106", "archive": "#64748b"}
DEFAULT_BACKEND = "onnx-int8"
VECTOR_PATHS = {"exact": "exact", "hnsw": "HNSW"}
PERSONAL_SETS = ("personal", "personal-2", "realdocs")
SET_COLOURS = {
    "SciFact": "#0f766e",
    "personal": "#7c3aed",
    "personal-2": "#c026d3",
    "realdocs": "#b45309",
    "LoCoMo": "#2563eb",
}
SET_NAMES = {"scifact": "SciFact", "locomo": "LoCoMo"}  # the data sets as bench_calibrate names them

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
            data["rows"],
            # The runs before the scale runs (uniform random vectors, a quieter machine); those have their own plot.
            lambda f, size=size: (
                f["chunks"] == size and f["product_choice"] and "p50_ms" in f and "recall_at_10" not in f
            ),
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
    ax.set_title("Hybrid search latency against collection size (uniform random vectors)")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def _scale_rows(data: dict) -> list[dict]:
    """Per collection size, the newest run that measured recall (the scale runs), smallest first."""
    rows = [row for row in data["rows"] if "recall_at_10" in row["figures"]]
    sizes = sorted({row["figures"]["chunks"] for row in rows})
    return [latest(rows, lambda f, size=size: f["chunks"] == size) for size in sizes]


def search_scale(data_dir: Path) -> Figure:
    """10k → 100k → 1M chunks: latency (and a tiny owner's beside the large one), recall@10 of the
    HNSW index against exact search, and what the index costs to build and keep."""
    data = load(data_dir, "bench_search")
    points = _scale_rows(data)
    xs = [p["chunks"] for p in points]
    labels = [f"{x:,}" for x in xs]
    fig = Figure(figsize=(9.6, 3.4))
    latency, recall, cost = fig.subplots(1, 3)
    latency.plot(xs, [p["p50_ms"] for p in points], "o-", label="p50")
    latency.plot(xs, [p["p95_ms"] for p in points], "s-", label="p95")
    latency.plot(xs, [p["tiny_owner_p95_ms"] for p in points], "^--", label="p95, a 200-chunk owner")
    latency.axhline(data["target"]["p95_ms"], color="#b91c1c", linestyle="--", linewidth=1, label="p95 target")
    for p in points:
        latency.annotate(
            VECTOR_PATHS[p["vector_search"]],
            (p["chunks"], p["p95_ms"]),
            textcoords="offset points",
            xytext=(8, -3),
            fontsize=8,
            color="#555",
        )
    # Log scale: the runs of a shared machine differ several-fold in load, and the exact path of a
    # small owner can be slower than the index path of a large one.
    latency.set_yscale("log")
    latency.set_ylabel("ms per search (log)")
    latency.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    latency.yaxis.set_major_formatter(ticker.ScalarFormatter())
    latency.yaxis.set_minor_formatter(ticker.NullFormatter())
    latency.set_title("Latency", fontsize=10)
    latency.legend(loc="upper right", fontsize=7, frameon=False)
    recall.plot(xs, [p["recall_at_10"] for p in points], "o-", color="#0f766e", label="HNSW vector side")
    recall.plot(xs, [p["hybrid_top10_overlap"] for p in points], "s--", color="#7c3aed", label="whole hybrid top 10")
    recall.axhline(data["target"]["recall_at_10"], color="#b91c1c", linestyle="--", linewidth=1, label="target")
    recall.set_ylim(0.8, 1.01)
    recall.set_ylabel("recall@10 against exact search")
    recall.set_title("Recall", fontsize=10)
    recall.legend(loc="lower left", fontsize=7, frameon=False)
    cost.bar(
        [i - 0.2 for i in range(len(xs))], [p["build"]["total_min"] for p in points], width=0.4, label="build, minutes"
    )
    disk = cost.twinx()
    disk.bar(
        [i + 0.2 for i in range(len(xs))],
        [p["sizes_mb"]["hnsw_active_index"] / 1024 for p in points],
        width=0.4,
        color="#d4a106",
        label="HNSW index, GB",
    )
    disk.spines["right"].set_visible(True)
    cost.set_xticks(range(len(xs)), labels)
    cost.set_ylabel("build minutes (data and indexes)")
    disk.set_ylabel("HNSW index, GB")
    cost.set_title("Cost", fontsize=10)
    handles = cost.get_legend_handles_labels()[0] + disk.get_legend_handles_labels()[0]
    cost.legend(handles=handles, loc="upper left", fontsize=7, frameon=False)
    cost.set_ylim(0, max([p["build"]["total_min"] for p in points] or [1]) * 1.3)
    disk.set_ylim(0, max([p["sizes_mb"]["hnsw_active_index"] / 1024 for p in points] or [1]) * 1.3)
    for ax in (latency, recall):
        ax.set_xscale("log")
        ax.set_xticks(xs, labels)
        ax.set_xlabel("chunks of the searching owner")
    cost.set_xlabel("chunks of the searching owner")
    hnsw = points[-1]["hnsw"] if points else {}
    # Each run's ef_search (the product's for that size, or the one the run measured at) beside its point.
    efs = ", ".join(f"{p['chunks']:,}: {p['hnsw'].get('ef_search')}" for p in points)
    fig.suptitle(
        f"Search at scale: HNSW m={hnsw.get('m')}, ef_construction={hnsw.get('ef_construction')}; ef_search {efs}"
    )
    return fig


def search_ef(data_dir: Path) -> Figure:
    """What a larger hnsw.ef_search buys and costs at each size: recall@10 against p95 latency."""
    data = load(data_dir, "bench_search")
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.subplots()
    for p in _scale_rows(data):
        sweep = [{"ef_search": int(ef), **figures} for ef, figures in p["ef_search_sweep"].items()]
        ax.plot([s["p95_ms"] for s in sweep], [s["recall_at_10"] for s in sweep], "o-", label=f"{p['chunks']:,} chunks")
        for s in sweep:
            ax.annotate(
                f"ef {s['ef_search']}",
                (s["p95_ms"], s["recall_at_10"]),
                textcoords="offset points",
                xytext=(4, -10),
                fontsize=7,
                color="#555",
            )
    ax.axhline(data["target"]["recall_at_10"], color="#b91c1c", linestyle="--", linewidth=1, label="recall target")
    ax.axvline(data["target"]["p95_ms"], color="#b91c1c", linestyle=":", linewidth=1, label="p95 target")
    ax.set_xlabel("p95 ms per hybrid search")
    ax.set_ylabel("recall@10 of the HNSW index")
    ax.set_title("hnsw.ef_search: recall against latency")
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
    bars = [
        ("SciFact", "nDCG@10", scifact["ndcg_at_10"]),
        ("SciFact", "nDCG@10, limit 10 + floor", scifact["ndcg_at_10_floor"]),
        ("SciFact", "recall@100", scifact["recall_at_100"]),
        ("SciFact", "vector-only nDCG@10", scifact["vector_only_ndcg_at_10"]),
    ]
    personal_rows = load(data_dir, "bench_personal")["rows"]
    for data_set in PERSONAL_SETS:  # each collection on its own, never averaged
        personal = latest(personal_rows, lambda f, s=data_set: default(f) and f.get("data_set") == s)
        if personal is None:
            continue
        bars += [
            (data_set, "top-1", personal["top1"]),
            (data_set, "paraphrase top-1", personal["top1_by_query_type"]["paraphrase"]),
            (data_set, "no-answer queries empty", personal["no_answer_empty"]),
        ]
    conversations = latest(load(data_dir, "bench_conversations")["rows"])
    bars += [
        ("LoCoMo", "turn R@5", conversations["turn_r_at_5"]),
        ("LoCoMo", "session R@5", conversations["session_r_at_5"]),
    ]
    colours = SET_COLOURS
    fig = Figure(figsize=(6.4, 4.6))
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


def relevance_reliability(data_dir: Path) -> Figure:
    """Per data set, the share of relevant results at each hybridScore and at each vectorScore, with
    the good-match rule's vector threshold."""
    data = load(data_dir, "bench_calibrate")
    threshold = data["calibrated"]["min_vector_score"]
    fig = Figure(figsize=(7.2, 3.6))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, key, label in (
        (axes[0], "reliability", "hybridScore"),
        (axes[1], "vector_reliability", "vectorScore"),
    ):
        for name, bands in data[key].items():
            name = SET_NAMES.get(name, name)
            bands = [b for b in bands if b["results"] >= 5]  # a share of fewer results says little
            ax.plot(
                [b["score"] + 0.025 for b in bands],
                [b["relevant_share"] for b in bands],
                "o-",
                markersize=3,
                color=SET_COLOURS.get(name, "#555"),
                label=name,
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(f"{label} (bands of 0.05)")
    axes[1].axvline(threshold, color="#b91c1c", linestyle="--", linewidth=1, label=f"good match ≥ {threshold:.2f}")
    axes[0].set_ylabel("share of results that are relevant")
    axes[1].legend(loc="upper left", fontsize=8, frameon=False)
    fig.suptitle("Reliability: what a score means in each data set (first 10 results)")
    return fig


PLOTS: dict[str, Callable[[Path], Figure]] = {
    "search-latency": search_latency,
    "search-scale": search_scale,
    "search-ef": search_ef,
    "tiers-90-days": tiers_over_time,
    "retrieval-quality": retrieval_quality,
    "relevance-reliability": relevance_reliability,
}


def render(draw: Callable[[Path], Figure], data_dir: Path) -> str:
    fig = draw(data_dir)
    fig.set_layout_engine("constrained")
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


MARKER = re.compile(r"^<!-- benchmark: (\w+) -->$", re.MULTILINE)


def cell(value, key: str = "") -> str:
    """One figure as table text: dicts as `key: value` lines, a `*_range` as low–high, other lists
    comma-separated, big integers grouped."""
    if isinstance(value, dict):
        return "<br>".join(f"{name.replace('_', ' ')}: {cell(item, name)}" for name, item in value.items())
    if isinstance(value, list):
        return ("–" if key.endswith("_range") else ", ").join(cell(item) for item in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and abs(value) >= 1000:
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def run(row: dict) -> str:
    """A row's date, command and machine (and its note), as one line."""
    note = f" {row['note'][0].upper()}{row['note'][1:]}." if row.get("note") else ""
    return f"*{row['date']}*, `{row['command']}`; {row['machine']}.{note}"


def table(data: dict) -> str:
    """The rows of one data file as Markdown. A single row is a figure-and-value table under its
    date, command and machine. Several rows are a table with a column per plain figure, each row
    numbered; under it, by number, each run's date, command and machine, and its grouped figures.
    A file's summary (figures over the whole of its runs) follows as a table of its own."""
    if "summary" in data:
        return table({"rows": data["rows"]}) + "\n\nOver the whole run:\n\n" + table({"rows": [data["summary"]]})
    rows = data["rows"]
    if len(rows) == 1:
        row = rows[0]
        lines = [run(row), "", "| figure | value |", "| --- | --- |"]
        lines += [f"| {key.replace('_', ' ')} | {cell(value, key)} |" for key, value in row["figures"].items()]
        return "\n".join(lines)
    grouped = {key for row in rows for key, value in row["figures"].items() if isinstance(value, dict)}
    keys = [key for key in dict.fromkeys(key for row in rows for key in row["figures"]) if key not in grouped]
    lines = [
        "| run | " + " | ".join(key.replace("_", " ") for key in keys) + " |",
        "| --- | " + " | ".join("---" for _ in keys) + " |",
    ]
    for number, row in enumerate(rows, 1):
        figures = " | ".join(cell(row["figures"][key], key) if key in row["figures"] else "–" for key in keys)
        lines.append(f"| {number} | {figures} |")
    runs = [run(row) for row in rows]
    if len(set(runs)) == 1 and not grouped:
        return "\n".join([*lines, "", f"Every run: {runs[0]}"])
    lines.append("")
    for number, row in enumerate(rows, 1):
        lines.append(f"{number}. {runs[number - 1]}")
        for key, value in row["figures"].items():
            if key in grouped:
                items = value.items() if isinstance(value, dict) else [("", value)]
                text = ", ".join(f"{k.replace('_', ' ')} {cell(v, k)}".strip() for k, v in items)
                lines.append(f"    - {key.replace('_', ' ')}: {text}.")
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    """Replace each benchmark marker with the table of its data file and a link to the file."""
    data_dir = Path(config["docs_dir"]) / "benchmarks"

    def replace(match: re.Match) -> str:
        name = match.group(1)
        link = posixpath.relpath(f"benchmarks/{name}.json", posixpath.dirname(page.file.src_uri) or ".")
        return f"{table(load(data_dir, name))}\n\nData: [{name}.json]({link})"

    return MARKER.sub(replace, markdown)


def on_files(files, config):
    """Add each plot to the site's files, drawn from the data as it is now."""
    from mkdocs.structure.files import File

    data_dir = Path(config["docs_dir"]) / "benchmarks"
    for name, draw in PLOTS.items():
        files.append(File.generated(config, f"{PLOTS_DIR}/{name}.svg", content=render(draw, data_dir)))
    return files
