"""Which machine a benchmark ran on, in one line: every figure in docs/benchmarks.md depends on it.

Why: the same 872-sentence run took 13 min 07 s on an AMD EPYC with AVX2 and 6 min 26 s on an Intel Xeon with
AVX-512 and AMX, both "2 cores". A figure without its CPU cannot be compared with another. Product
code (the reproduce pages record it with every finding) and the benchmarks (`bench/machine.py`) print the same line.
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

import settings

FLAGS_OF_INTEREST = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def _cpu_info() -> tuple[str, set[str]]:
    """The CPU's model name and flags from /proc/cpuinfo (Linux); the platform's name elsewhere."""
    info = Path("/proc/cpuinfo")
    if not info.exists():
        return platform.processor() or platform.machine(), set()
    name, flags = "", set[str]()
    for line in info.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and not name:
            name = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return name or platform.machine(), flags


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def describe() -> str:
    """E.g. 'Intel(R) Xeon(R) Processor, 2 cores, ISA avx2 avx512f avx512_bf16 amx_bf16, torch kernels AVX512,
    native bf16 yes, device cpu'."""
    import torch  # here, not at the top: bench_page and bench_cold_start time their own imports of torch

    name, flags = _cpu_info()
    isa = " ".join(flag for flag in FLAGS_OF_INTEREST if flag in flags) or "unknown"
    native_bf16 = "yes" if torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported() \
        else "no"
    device = settings.device_setting()
    gpu = f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""
    return (f"{name}, {cores()} cores, ISA {isa}, torch kernels {torch.backends.cpu.get_cpu_capability()}, "
            f"native bf16 {native_bf16}, EXWB_DEVICE {device}{gpu}")

