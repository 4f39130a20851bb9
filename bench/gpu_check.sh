#!/usr/bin/env bash
# The first thing a machine with a CUDA GPU runs, in at most 8 minutes:
#   1. the tests marked `gpu` (pytest.ini) under EXWB_DEVICE=cuda: batch sizes from the memory model on the device,
#      a real out-of-memory error halved, bf16 |dp| recorded;
#   2. the page benchmark (bench/bench_page.py: the Heatmaps page's cold visit and cached reruns) on the GPU;
#   3. the scaling benchmark (bench/bench_scaling.py) at fp32 and at bf16.
# Its figures are appended, with the GPU's name, to docs/benchmarks.md. CI never has a GPU: nothing else needs this.
#
#   bash bench/gpu_check.sh               # PYTHON=.venv/bin/python unless set
#   SCALING_MODELS=minilm-l6,bert-base bash bench/gpu_check.sh   # fewer models
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
export EXWB_DEVICE=cuda HF_HUB_OFFLINE=1
SCALING_MODELS=${SCALING_MODELS:-minilm-l6,bert-base,bert-large,llama-1b}
OUT=$(mktemp -d)
started=$(date +%s)

if ! "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu_check: no CUDA device here (torch.cuda.is_available() is false); nothing to do." >&2
    exit 1
fi
GPU=$("$PYTHON" -c "import torch; p = torch.cuda.get_device_properties(0); print(f'{p.name}, {p.total_memory / 2**30:.0f} GiB')")
echo "gpu_check on $GPU"

# 1. the GPU tests (2.5 min at most)
timeout 150 "$PYTHON" -m pytest -q -m gpu tests/models/test_memory_gpu.py -p no:cacheprovider > "$OUT/tests.txt" 2>&1
echo "tests: exit $? ($(tail -n 1 "$OUT/tests.txt"))" | tee "$OUT/tests-line.txt"

# 2. the page benchmark (1.5 min at most; it needs the prepared default model: cli.py prepare)
if "$PYTHON" -c "import sys; from models.loading import load_classifier; load_classifier('default')" > /dev/null 2>&1; then
    timeout 90 "$PYTHON" bench/bench_page.py --reruns 5 > "$OUT/page.txt" 2>&1 || echo "(page benchmark: exit $?)" >> "$OUT/page.txt"
else
    echo "skipped: the default model is not prepared on this machine (python cli.py prepare --model default)" > "$OUT/page.txt"
fi

# 3. the scaling benchmark, fp32 then bf16 (2 min each at most; whatever finished is kept)
timeout 120 "$PYTHON" bench/bench_scaling.py --models "$SCALING_MODELS" --rounds 2 > "$OUT/scaling-fp32.txt" 2>&1 \
    || echo "(stopped or failed: exit $?)" >> "$OUT/scaling-fp32.txt"
timeout 120 "$PYTHON" bench/bench_scaling.py --models "$SCALING_MODELS" --rounds 2 --precision bf16 > "$OUT/scaling-bf16.txt" 2>&1 \
    || echo "(stopped or failed: exit $?)" >> "$OUT/scaling-bf16.txt"

{
    echo
    echo "## GPU check: $GPU, $(date -u +%Y-%m-%d)"
    echo
    echo "bench/gpu_check.sh, $(( $(date +%s) - started )) s in all; $("$PYTHON" bench/machine.py 2>/dev/null | tail -n 1)."
    echo
    echo "GPU tests (pytest -m gpu, EXWB_DEVICE=cuda): $(cat "$OUT/tests-line.txt")"
    echo
    echo "Page benchmark (bench/bench_page.py --reruns 5):"
    echo
    echo '```'
    tail -n 40 "$OUT/page.txt"
    echo '```'
    echo
    echo "Scaling benchmark, fp32 (bench/bench_scaling.py):"
    echo
    grep -v '^<!--' "$OUT/scaling-fp32.txt" | tail -n 60
    echo
    echo "Scaling benchmark, bf16 autocast for the explanations (--precision bf16):"
    echo
    grep -v '^<!--' "$OUT/scaling-bf16.txt" | tail -n 60
} >> docs/benchmarks.md
echo "appended to docs/benchmarks.md ($(( $(date +%s) - started )) s)"
cat "$OUT/tests.txt" | tail -n 20
