"""The headless core never imports the UI: checked by import-linter's contract and by a clean interpreter."""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys

import explorer
from tests.conftest import ROOT


def test_importing_every_core_module_loads_no_textual():
    names = [m.name for m in pkgutil.walk_packages(explorer.__path__, "explorer.") if m.name != "explorer.__main__"]
    assert "explorer.cli" in names and "explorer.loaders.scheduler_ir" in names
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
    assert "1 kept, 0 broken" in result.stdout
