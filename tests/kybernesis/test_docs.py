"""The documentation: the benchmark data, and the plots and tables drawn from it at build time."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BENCHMARKS = DOCS / "benchmarks"


@pytest.fixture(scope="module")
def plots():
    """The MkDocs hook that draws the plots, loaded from its file (it is not a package of the project)."""
    spec = importlib.util.spec_from_file_location("benchmark_plots", DOCS / "_hooks" / "benchmark_plots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_row_has_its_date_machine_command_and_figures():
    files = sorted(BENCHMARKS.glob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["benchmark"] == path.stem, path.name
        assert data["rows"], path.name
        for row in data["rows"]:
            assert set(row) >= {"date", "machine", "command", "figures"}, (path.name, row)
            date.fromisoformat(row["date"])
            assert row["machine"].strip() and row["figures"], (path.name, row)
            assert re.match(r"^(\S+=\S+ )*(manage\.py |make )", row["command"]), (path.name, row["command"])


def test_each_plot_is_an_svg_drawn_from_the_data(plots):
    for name, draw in plots.PLOTS.items():
        svg = plots.render(draw, BENCHMARKS)
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg, name
        assert svg == plots.render(draw, BENCHMARKS), f"{name} is not the same SVG twice from the same data"


def test_a_plot_changes_with_its_data_file(plots, tmp_path):
    data = tmp_path / "benchmarks"
    shutil.copytree(BENCHMARKS, data)
    path = data / "bench_personal.json"
    personal = json.loads(path.read_text(encoding="utf-8"))
    personal["rows"][-1]["figures"]["top1"] = 0.123
    path.write_text(json.dumps(personal), encoding="utf-8")

    assert "0.123" not in plots.render(plots.retrieval_quality, BENCHMARKS)
    assert "0.123" in plots.render(plots.retrieval_quality, data)


def test_the_newest_row_wins(plots):
    rows = [
        {"date": "2026-01-02", "figures": {"n": 2}},
        {"date": "2026-01-03", "figures": {"n": 3}},
        {"date": "2026-01-01", "figures": {"n": 1}},
    ]
    assert plots.latest(rows) == {"n": 3}
    assert plots.latest(rows, lambda f: f["n"] < 3) == {"n": 2}
    assert plots.latest(rows, lambda f: False) is None


def test_mkdocs_runs_the_hook_and_it_adds_each_plot_to_the_site(plots):
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    config = load_config(str(ROOT / "mkdocs.yml"))
    files = config.plugins.on_files(Files([]), config=config)
    generated = {f.src_uri: f for f in files if f.generated_by}
    assert sorted(generated) == sorted(f"benchmarks/plots/{name}.svg" for name in plots.PLOTS)
    assert all(f.content_string.lstrip().startswith("<?xml") for f in generated.values())


def test_a_benchmark_marker_becomes_the_table_of_its_data_file(plots, tmp_path):
    (tmp_path / "benchmarks").mkdir()
    row = {"date": "2026-01-02", "machine": "2 cores", "command": "manage.py bench_x", "figures": {}}
    one = {"benchmark": "bench_one", "rows": [{**row, "figures": {"p95_ms": 21.7, "phases": {"copy": 125}}}]}
    two = {"benchmark": "bench_two", "rows": [{**row, "figures": {"chunks": 100000}}, {**row, "figures": {"rps": 9}}]}
    for data in (one, two):
        (tmp_path / "benchmarks" / f"{data['benchmark']}.json").write_text(json.dumps(data), encoding="utf-8")

    class Page:
        class file:
            src_uri = "features/speed.md"

    markdown = plots.on_page_markdown(
        "Before.\n\n<!-- benchmark: bench_one -->\n\n<!-- benchmark: bench_two -->\n\nAfter.",
        Page,
        {"docs_dir": str(tmp_path)},
        None,
    )
    assert "<!-- benchmark" not in markdown
    assert "*2026-01-02*, `manage.py bench_x`; 2 cores." in markdown
    assert "| p95 ms | 21.7 |\n| phases | copy: 125 |" in markdown
    assert "| run | chunks | rps |" in markdown
    assert "| 1 | 100,000 | – |" in markdown
    assert "Every run: *2026-01-02*, `manage.py bench_x`; 2 cores." in markdown
    assert "Data: [bench_one.json](../benchmarks/bench_one.json)" in markdown
