#!/usr/bin/env bash
# Builds .venv-ferret: a virtualenv for the ferret-xai head-to-head benchmark ONLY (bench/bench_ferret.py).
# ferret pins transformers<5, numpy<2 and captum<0.8, which conflict with the app's .venv, so it lives apart
# and neither the app nor the tests ever import it.
#   bash bench/ferret/setup.sh            (or: make bench-ferret, which also runs the benchmark)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${FERRET_VENV:-.venv-ferret}
PYTHON=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/python -m pip install --disable-pip-version-check -q"
[ -f "$VENV/.installed" ] && exit 0
# torch 2.13.0 is the CPU wheel pip finds locally; an unpinned torch would pull gigabytes of CUDA libraries.
$PIP "torch==2.13.0"
# ferret-xai 0.4.2's own pins, minus the packages it lists but never imports on the explain/evaluate path.
$PIP "transformers>=4.36.2,<5" "captum>=0.7,<0.8" "lime>=0.2.0.1,<0.3" "shap>=0.44,<0.45" "numpy<2" \
    "pandas>=2.0.3,<3" "seaborn>=0.13.1,<0.14" "datasets>=2.16.1,<3" "tqdm" "scikit-learn" "scipy" \
    "pytreebank>=0.2.7,<0.3" "opencv-python-headless>=4.9,<5" \
    "pyarrow<20"   # cv2: gradient.py does `from cv2 import multiply`; pyarrow 20+ refuses numpy 1
# ferret/__init__ imports thermostat-datasets (which imports spacy) for its Thermostat loader only: not installed;
# run_ferret.py puts an empty `thermostat` module in its place before `import ferret`.
$PIP --no-deps "ferret-xai==0.4.2"
"$VENV/bin/python" -c "import sys, types; sys.modules['thermostat'] = types.ModuleType('thermostat'); \
import ferret, shap, lime, captum, transformers; print('ferret-xai', ferret.__version__, 'transformers', \
transformers.__version__, 'shap', shap.__version__, 'captum', captum.__version__)"
touch "$VENV/.installed"
