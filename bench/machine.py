"""Which machine a benchmark ran on, in one line (`models/machine.py`: every figure in docs/benchmarks.md depends on
it). ``python bench/machine.py`` prints it."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # settings.py, which models/machine.py reads
# The file itself, not ``models.machine``: importing the package ``models`` imports torch, and bench_page /
# bench_cold_start time their own imports of torch.
_spec = importlib.util.spec_from_file_location("exwb_machine", ROOT / "models" / "machine.py")
_machine = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_machine)
FLAGS_OF_INTEREST, cores, describe = _machine.FLAGS_OF_INTEREST, _machine.cores, _machine.describe

if __name__ == "__main__":
    print(describe())
