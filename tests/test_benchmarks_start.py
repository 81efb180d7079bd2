"""Every benchmark still starts: the figures issue 23 keeps are only measured if their scripts run.

A benchmark imports internals of trous (student_venv.py repacks wheels with publish.edition's writer,
grade_class.py drives the grading machinery), so a refactoring can break one without any test of
behaviour failing; `--help` imports everything a script needs before it parses its arguments.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_the_benchmark_starts(script):
    if '__name__ == "__main__"' in script.read_text(encoding="utf-8"):
        result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "usage" in result.stdout.lower(), result.stderr[-2000:]
    else:  # a helper module of the other benchmarks
        code = f"import sys; sys.path.insert(0, {str(script.parent)!r}); import {script.stem}"
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
