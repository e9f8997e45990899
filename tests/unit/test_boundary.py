"""The design's boundaries: the core never imports the UI (import-linter and a clean interpreter), formats are
independent of each other, and neither the core nor the UI imports a format."""

from __future__ import annotations

import ast
import os
import pkgutil
import shutil
import subprocess
import sys

import explorer
from tests.conftest import ROOT


def test_importing_every_core_module_loads_no_textual():
    names = [m.name for m in pkgutil.walk_packages(explorer.__path__, "explorer.") if m.name != "explorer.__main__"]
    assert "explorer.cli" in names and "explorer.formats.scheduler_ir.reader" in names
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "from explorer.api import open_document\n"
        f"open_document({str(ROOT / 'sample_data' / 'clean_2x2_stschedule.json')!r})\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'widgets'))\n"
        "print(bad)\n"
        "raise SystemExit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_linter_contract_holds():
    lint_imports = shutil.which("lint-imports", path=str(ROOT / ".venv" / "bin")) or shutil.which("lint-imports")
    assert lint_imports, "import-linter is part of the test extra"
    result = subprocess.run([lint_imports], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    for contract in (
        "The headless core never imports the UI",
        "Formats are independent of each other",
        "The UI knows formats only through the Document interface",
    ):
        assert f"{contract} KEPT" in result.stdout


def test_every_format_package_is_under_the_contracts_and_registered():
    """A new format package must be in the independence contract and in the registry, or it escapes both."""
    import tomllib

    from explorer.registry import BUILTIN_FORMATS

    packages = sorted(
        f"explorer.formats.{p.name}" for p in (ROOT / "explorer" / "formats").iterdir() if (p / "__init__.py").exists()
    )
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    independent = next(c for c in contracts if c["type"] == "independence")["modules"]
    assert sorted(independent) == packages
    assert sorted(BUILTIN_FORMATS) == packages


HEAVY = ("onnx", "textual", "rich", "pydantic", "duckdb", "numpy", "google", "coremltools", "plotly", "networkx",
         "importlib.metadata")


def _imported_by(argv: list[str], watched: tuple[str, ...] = HEAVY) -> list[str]:
    """The `watched` modules (the heavy packages) a command imported, run in a clean interpreter as the console
    script `ir-explorer ARGV` runs it (pyproject's entry point)."""
    code = (
        "import contextlib, io, sys\n"
        f"sys.argv = ['ir-explorer', *{argv!r}]\n"
        "from explorer.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(({{m.split('.')[0] for m in sys.modules}} | set(sys.modules)) & set({watched!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "IR_EXPLORER_WORKERS": "0"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_help_and_version_import_nothing_heavy():
    """Issue #73: `--help` and `--version` answer before you notice (they imported numpy through the Document, and
    importlib.metadata for plug-ins no distribution declared: 30 ms)."""
    assert _imported_by(["--version"]) == []
    assert _imported_by(["--help"]) == []
    assert _imported_by(["info", "--help"]) == []
    # the console script answers them from the parsers alone: the CLI's module and its imports are not loaded
    assert 'ir-explorer = "explorer.entry:main"' in (ROOT / "pyproject.toml").read_text()
    light = ("explorer.cli", "explorer.errors", "explorer.writing", "dataclasses", "tempfile", "json")
    assert _imported_by(["--help"], light) == []
    assert _imported_by(["--version"], light) == ["dataclasses", "explorer.errors"]  # the formats it lists
    assert _imported_by(["info", "--help"], light) != []  # a subcommand's help is the CLI's


def test_schedule_commands_import_only_what_they_use():
    """`info`, `check` and `query` of a schedule import neither onnx, textual nor pydantic; info and check no duckdb."""
    schedule = str(ROOT / "sample_data" / "clean_2x2_stschedule.json")
    assert _imported_by(["info", schedule]) == ["numpy"]
    assert _imported_by(["check", schedule]) == ["numpy"]
    # duckdb imports importlib.metadata itself
    assert _imported_by(["query", schedule, "select count(*) from workloads"]) == ["duckdb", "importlib.metadata",
                                                                                  "numpy"]  # fmt: skip
