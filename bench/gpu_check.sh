#!/usr/bin/env bash
# The first thing a machine with a CUDA GPU runs, in one call of at most 8 minutes (GPU_CHECK_SECONDS,
# default 450: each step's limit is cut to what is left, so the figures are appended whatever stopped early):
#   0. preflight (seconds): a Python with torch (CUDA), transformers, captum, tokenizers and pytest; nothing is
#      installed (the GPU machines reach no network: HF_HUB_OFFLINE=1, PIP_NO_INDEX=1);
#   1. the tests marked `gpu` (pytest.ini) under EXWB_DEVICE=cuda: batch sizes from the memory model on the device,
#      a real out-of-memory error halved, bf16 |dp| recorded;
#   2. the page benchmark (bench/bench_page.py: the Heatmaps page's cold visit and cached reruns) on the GPU, where
#      the default model is prepared (it is not on a bare machine: skipped, said so);
#   3. the scaling benchmark (bench/bench_scaling.py) at fp32 and at bf16; rows print as they finish.
#   4. paper 002's Table 1 on 20 whole ERASER reviews (bench/bench_table1.py, the quick seeded model, the paper's
#      settings) for TABLE1_SECONDS (default 120, on top of the budget above): a resumable stored run, so what
#      finished is reported (--report-only) and a later session continues it.
# Its figures are appended, with the GPU's name, to docs/benchmarks.md (GPU_CHECK_DOCS to write elsewhere). CI never
# has a GPU: nothing else needs this.
#
#   bash bench/gpu_check.sh                  # PYTHON=.venv/bin/python when it has torch, else python3
#   bash bench/gpu_check.sh --dry-run        # on a CPU: every step, tiny, EXWB_DEVICE=cpu; prints, appends nothing
#   SCALING_MODELS=minilm-l6,bert-base bash bench/gpu_check.sh   # fewer models
set -u
cd "$(dirname "$0")/.."
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    [ -x .venv/bin/python ] && .venv/bin/python -c "import torch" > /dev/null 2>&1 && PYTHON=.venv/bin/python
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PIP_NO_INDEX=1 TOKENIZERS_PARALLELISM=false
BUDGET=${GPU_CHECK_SECONDS:-450}
DOCS=${GPU_CHECK_DOCS:-docs/benchmarks.md}
SCALING_MODELS=${SCALING_MODELS:-minilm-l6,bert-base,bert-large,llama-1b}
SCALING_ARGS=(--rounds 2)
PAGE_ARGS=(--reruns 5)
if [ "$DRY" = 1 ]; then  # the same commands on the CPU, at their smallest: a typo fails here, not on the GPU
    export EXWB_DEVICE=cpu
    SCALING_MODELS=minilm-l6
    SCALING_ARGS=(--quick --tokens 64 --methods saliency --rounds 1)
    PAGE_ARGS=(--reruns 1 --parts page)
else
    export EXWB_DEVICE=cuda
fi
OUT=$(mktemp -d)
started=$(date +%s)
left() {  # seconds left for a step: at most $1, never past the budget (less 20 s to write the figures)
    local rest=$(( BUDGET - 20 - ($(date +%s) - started) ))
    [ "$rest" -lt "$1" ] && echo $(( rest > 5 ? rest : 5 )) || echo "$1"
}

# 0. preflight
if ! "$PYTHON" - > "$OUT/preflight.txt" 2>&1 <<'EOF'
import importlib.util, os, sys
missing = [name for name in ("torch", "transformers", "captum", "tokenizers", "pytest", "numpy", "pandas")
           if importlib.util.find_spec(name) is None]
if missing:
    sys.exit(f"missing packages: {', '.join(missing)} (install them from requirements.txt before the GPU session; "
             f"this script installs nothing)")
import torch
if os.environ["EXWB_DEVICE"] == "cuda" and not torch.cuda.is_available():
    sys.exit(f"no CUDA device here (torch {torch.__version__}: torch.cuda.is_available() is false)")
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA {torch.version.cuda}")
EOF
then
    echo "gpu_check: $(tail -n 1 "$OUT/preflight.txt")" >&2
    exit 1
fi
if [ "$DRY" = 1 ]; then
    GPU="dry run on the CPU (no GPU)"
else
    GPU=$("$PYTHON" -c "import torch; p = torch.cuda.get_device_properties(0); print(f'{p.name}, {p.total_memory / 2**30:.0f} GiB, {torch.cuda.device_count()} visible')")
fi
echo "gpu_check on $GPU; $(cat "$OUT/preflight.txt"); budget ${BUDGET} s"

# 1. the GPU tests (2 min at most; --dry-run: collected only, they skip without CUDA)
GPU_TESTS=$(grep -rl "mark.gpu" tests --include='test_*.py' | sort | tr '\n' ' ')
if [ "$DRY" = 1 ]; then
    timeout "$(left 120)" "$PYTHON" -m pytest -q --collect-only -m gpu $GPU_TESTS -p no:cacheprovider > "$OUT/tests.txt" 2>&1
else
    timeout "$(left 120)" "$PYTHON" -m pytest -q -m gpu $GPU_TESTS -p no:cacheprovider > "$OUT/tests.txt" 2>&1
fi
echo "tests ($GPU_TESTS): exit $? ($(tail -n 1 "$OUT/tests.txt"))" | tee "$OUT/tests-line.txt"

# 2. the page benchmark (75 s at most; it needs the prepared default model: cli.py prepare)
if "$PYTHON" -c "from models.loading import load_classifier; load_classifier('default')" > /dev/null 2>&1; then
    timeout "$(left 75)" "$PYTHON" -u bench/bench_page.py "${PAGE_ARGS[@]}" > "$OUT/page.txt" 2>&1 \
        || echo "(page benchmark: exit $?)" >> "$OUT/page.txt"
else
    echo "skipped: the default model is not prepared on this machine (python cli.py prepare --model default)" > "$OUT/page.txt"
fi
echo "page: $(tail -n 1 "$OUT/page.txt")"

# 3. the scaling benchmark, fp32 then bf16 (each half of what is left, 2 min at most; whatever finished is kept:
#    python -u, so the lines printed before a timeout are not lost in a buffer)
for precision in fp32 bf16; do
    half=$(( $(left 240) / 2 ))
    [ "$precision" = bf16 ] && half=$(left 120)
    timeout "$half" "$PYTHON" -u bench/bench_scaling.py --models "$SCALING_MODELS" "${SCALING_ARGS[@]}" \
        --precision "$precision" > "$OUT/scaling-$precision.txt" 2>&1 \
        || echo "(stopped at ${half} s or failed: exit $?)" >> "$OUT/scaling-$precision.txt"
    echo "scaling $precision: $(grep -c '^| [^|]* | [0-9]' "$OUT/scaling-$precision.txt") rows"
done

# 4. paper 002's Table 1 on whole documents (its own limit; the report is written from the stored documents)
TABLE1_ARGS=(--budget quick --documents 20)
TABLE1_SECONDS=${TABLE1_SECONDS:-120}
if [ "$DRY" = 1 ]; then  # tiny settings on the CPU; the tiny models are trained first when missing (minutes)
    TABLE1_ARGS=(--budget tiny --documents 2)
    TABLE1_SECONDS=${TABLE1_DRY_SECONDS:-600}
fi
timeout "${TABLE1_SECONDS}" "$PYTHON" -u bench/bench_table1.py "${TABLE1_ARGS[@]}" > "$OUT/table1-run.txt" 2>&1 \
    || echo "(stopped at ${TABLE1_SECONDS} s or failed: exit $?)" >> "$OUT/table1-run.txt"
"$PYTHON" bench/bench_table1.py "${TABLE1_ARGS[@]}" --report-only > "$OUT/table1.txt" 2>&1 \
    || tail -n 5 "$OUT/table1-run.txt" >> "$OUT/table1.txt"
echo "table1: $(grep -c '^| [A-Z]' "$OUT/table1.txt") method rows"

{
    echo
    echo "## GPU check: $GPU, $(date -u +%Y-%m-%d)"
    echo
    echo "bench/gpu_check.sh, $(( $(date +%s) - started )) s in all; $("$PYTHON" bench/machine.py 2>/dev/null | tail -n 1)."
    echo "$(cat "$OUT/preflight.txt")."
    echo
    echo "GPU tests (pytest -m gpu, EXWB_DEVICE=$EXWB_DEVICE): $(cat "$OUT/tests-line.txt")"
    echo
    echo "Page benchmark (bench/bench_page.py ${PAGE_ARGS[*]}):"
    echo
    echo '```'
    tail -n 40 "$OUT/page.txt"
    echo '```'
    for precision in fp32 bf16; do
        echo
        echo "Scaling benchmark, $precision (bench/bench_scaling.py --models $SCALING_MODELS ${SCALING_ARGS[*]}):"
        echo
        grep -v '^<!--' "$OUT/scaling-$precision.txt" | tail -n 60
    done
    echo
    echo "Paper 002 Table 1 on whole documents (bench/bench_table1.py ${TABLE1_ARGS[*]}, at most ${TABLE1_SECONDS} s):"
    grep -v '^(' "$OUT/table1.txt" | tail -n 20
} > "$OUT/block.md"
if [ "$DRY" = 1 ]; then
    cat "$OUT/block.md"
    echo "dry run: nothing appended ($(( $(date +%s) - started )) s)"
else
    cat "$OUT/block.md" >> "$DOCS"
    cat "$OUT/block.md"
    echo "appended to $DOCS ($(( $(date +%s) - started )) s)"
fi
tail -n 20 "$OUT/tests.txt"
