"""The documentation: the README's length, the configuration table against the settings the code
reads, and the benchmark data with the plots drawn from it at build time."""

from __future__ import annotations

import ast
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
CONFIGURATION = DOCS / "configuration.md"
NAME = re.compile(r"KYBERNESIS_[A-Z0-9_]+")
# Settings named without the prefix; each must still be read somewhere.
PLAIN_NAMES = {"DATABASE_URL", "HOST", "PORT"}


def python_sources() -> list[Path]:
    """The project's Python files: manage.py and every top-level package, tests aside."""
    paths = [ROOT / "manage.py"]
    for top in sorted(ROOT.iterdir()):
        if top.is_dir() and not top.is_symlink() and top.name != "tests" and (top / "__init__.py").exists():
            paths.extend(sorted(top.rglob("*.py")))
    return paths


def tier_settings(trees: list[ast.AST]) -> set[str]:
    """KYBERNESIS_TIER_<FIELD> for each field of the tier policy, which reads them by that prefix."""
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "TierPolicy":
                return {
                    "KYBERNESIS_TIER_" + item.target.id.upper()
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
    raise AssertionError("no TierPolicy class found: where do the KYBERNESIS_TIER_* settings come from now?")


def f_string_name(node: ast.JoinedStr) -> re.Pattern | None:
    """The names an f-string such as f"KYBERNESIS_{prefix}_CLIENT_ID" can build, as a pattern."""
    if not node.values or not all(isinstance(node.values[i], ast.Constant) for i in (0, -1)):
        return None  # a name is built from literal ends: f"KYBERNESIS_{x}" alone is a label's prefix
    if not str(node.values[0].value).startswith("KYBERNESIS_"):
        return None
    literal = [str(part.value) for part in node.values if isinstance(part, ast.Constant)]
    if not all(re.fullmatch(r"[A-Z0-9_]*", text) for text in literal):
        return None  # a message that mentions a setting, not a setting's name
    return re.compile("".join(re.escape(p.value) if isinstance(p, ast.Constant) else "[A-Z0-9_]+" for p in node.values))


def settings_read_by_the_code() -> tuple[set[str], set[str], list[re.Pattern]]:
    """Names in string literals (every KYBERNESIS_* name, and the plain names that occur), and a
    pattern for each f-string that builds a KYBERNESIS_* name."""
    trees = [ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in python_sources()]
    names, plain, patterns = set(), set(), []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if NAME.fullmatch(node.value):
                    names.add(node.value)
                elif node.value in PLAIN_NAMES:
                    plain.add(node.value)
            elif isinstance(node, ast.JoinedStr) and (pattern := f_string_name(node)):
                patterns.append(pattern)
    prefixes = {name for name in names if name.endswith("_")}
    assert prefixes <= {"KYBERNESIS_TIER_"}, f"settings read by a prefix this test does not know: {prefixes}"
    if prefixes:
        names |= tier_settings(trees)
    return names - prefixes, plain, patterns


def configuration_table() -> list[str]:
    """The variable of each row of the one table on the configuration page."""
    names = []
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            found = re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1])
            assert len(found) == 1, f"one variable a row: {line}"
            names.append(found[0])
    return names


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move the detail into a page of docs/"


def test_the_configuration_table_lists_each_variable_once():
    names = configuration_table()
    assert len(names) > 100
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_every_setting_the_code_reads_is_in_the_configuration_table():
    names, _, patterns = settings_read_by_the_code()
    table = set(configuration_table())
    assert sorted(names - table) == [], "read by the code but missing from docs/configuration.md"
    for pattern in patterns:
        assert any(pattern.fullmatch(name) for name in table), f"no row of the table matches {pattern.pattern}"


def test_every_variable_in_the_configuration_table_is_read_by_the_code():
    names, plain, patterns = settings_read_by_the_code()
    unread = [
        name
        for name in configuration_table()
        if name not in names | plain and not any(pattern.fullmatch(name) for pattern in patterns)
    ]
    assert unread == [], "in docs/configuration.md but read nowhere in the code"


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


def test_every_benchmark_data_file_is_shown_on_the_benchmarks_page(plots):
    shown = set(plots.MARKER.findall((DOCS / "benchmarks.md").read_text(encoding="utf-8")))
    assert shown == {path.stem for path in BENCHMARKS.glob("*.json")}
