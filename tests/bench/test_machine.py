"""bench/machine.py (models/machine.py): the one line every benchmark prints about the machine its figures come from."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_machine", ROOT / "bench" / "machine.py")
machine = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(machine)


def test_the_line_names_the_cpu_its_cores_and_torch_kernels():
    line = machine.describe()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():  # the model name as the kernel reports it, read another way
        name = next(l.split(":", 1)[1].strip() for l in cpuinfo.read_text().splitlines() if l.startswith("model name"))
        assert line.startswith(name + ",")
    assert f", {len(os.sched_getaffinity(0))} cores," in line
    assert f"torch kernels {torch.backends.cpu.get_cpu_capability()}" in line
    assert ("native bf16 yes" in line) is bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
