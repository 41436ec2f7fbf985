"""The code passes the project's linter (ruff, configured in pyproject.toml), as part of the test command."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "moco_lab", "tests", "benchmarks"],
                            cwd=ROOT, capture_output=True, text=True)
    assert "No module named ruff" not in result.stderr, "ruff is missing: pip install -e .[test]"
    assert result.returncode == 0, result.stdout + result.stderr
