"""Configuration read from the environment, in one place.

Imports nothing heavy, so every layer (corpora included) may use it.

| variable             | meaning                                                         | default                                  |
|----------------------|-----------------------------------------------------------------|------------------------------------------|
| EXWB_DATA_DIR        | folder holding the datasets (sst2-sentences/, ...)              | ../shared/data beside the checkout       |
| EXWB_CACHE_DIR       | prepared models, explanation cache, result store                | $XDG_CACHE_HOME/explanation-workbench    |
| EXWB_ALLOW_HUB       | 1 = models and datasets may be fetched from the Hugging Face hub | 0 (offline: a miss fails in milliseconds) |
| EXWB_DEVICE          | auto, cpu, cuda, cuda:1, ...                                    | auto (CUDA when available)               |
| EXWB_THREADS         | torch intra-op threads                                          | 1 when other heavy processes share the CPU, see below |
| EXWB_RUN_WORKERS     | worker processes of `--executor processes` (dataset commands)  | the usable cores                         |
| EXWB_MODEL           | model the app opens with                                        | default                                  |
| EXWB_MLM             | the offline masked LM the name `mlm` stands for: mlm, mlm-plus, or best (mlm-plus when prepared) | mlm |
| EXWB_FAST            | 1 = `cli.py explain` runs in the fast reduced-precision mode     | 0 (full precision); metrics ignore it     |
|                      | (models/precision.py; `--fast` / `--no-fast` override it)       |                                          |
| EXWB_DISK_CACHE      | 0 = explanations are cached in memory only, not on disk          | 1                                        |
| EXWB_SHARE_PASSES    | 0 = methods run alone, sharing no forward pass (benchmarks)      | 1                                        |
| EXWB_FULL_LAST_LAYER | 1 = encoders compute their last layer for every token           | 0 (the first token only)                 |
| EXWB_RANDOMIZED_FAMILIES | randomized model families kept per process                  | 1                                        |
| EXWB_AUTORUN_SECONDS | estimated seconds single-input work may take and run unasked     | models/metering.py AUTORUN_SECONDS       |
| EXWB_RAY_ADDRESS     | Ray cluster of `--executor ray` (empty or `local`: this machine) | local                                    |
| EXWB_AML_BUDGET      | paper 004's AML recipe overrides, "name=value,..."              | none (the paper's recipe)                |

Boolean variables read 1/true/yes/on and 0/false/no/off in any case (``parse_bool``); unset or blank, or an
unrecognised word, means the default. Every ``EXWB_*`` variable is read here and nowhere else.
"""
from __future__ import annotations

import os
from pathlib import Path

PRODUCT = "Explanation Workbench"
ROOT = Path(__file__).resolve().parent


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


def parse_bool(text: str, default: bool | None = None) -> bool:
    """The project's one string-to-bool: 1/true/yes/on and 0/false/no/off (any case, blank = false).
    Anything else raises ValueError, or gives ``default`` when one is given (environment flags)."""
    word = str(text).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    if default is not None:
        return default
    raise ValueError(f"expected one of {', '.join(TRUE_WORDS + FALSE_WORDS[:-1])}; got {text!r}")


def _flag(name: str, default: bool = False) -> bool:
    """A boolean environment variable: unset, blank or an unrecognised word gives ``default``."""
    value = os.environ.get(name, "").strip()
    return parse_bool(value, default=default) if value else default


def allow_hub() -> bool:
    return _flag("EXWB_ALLOW_HUB")


def fast_mode() -> bool:
    """Explanations in reduced precision by default (EXWB_FAST); read only by the explain entry points."""
    return _flag("EXWB_FAST")


def cache_dir() -> Path:
    explicit = os.environ.get("EXWB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "explanation-workbench"


def data_dir_setting() -> Path | None:
    """EXWB_DATA_DIR as given (None when unset)."""
    explicit = os.environ.get("EXWB_DATA_DIR", "").strip()
    return Path(explicit).expanduser() if explicit else None


def data_dir_candidates() -> list[Path]:
    """Places the datasets are looked for, in order."""
    explicit = data_dir_setting()
    return ([explicit] if explicit else []) + [ROOT.parent / "shared" / "data"]


def data_dir() -> Path | None:
    """The first data folder that exists, as an absolute path (None when none does). Resolved on the machine that
    reads it: a job runner passes it to its workers (on a Ray cluster the project runs from an uploaded copy, beside
    which there is no shared/data)."""
    return next((place.resolve() for place in data_dir_candidates() if place.is_dir()), None)


def disk_cache_enabled() -> bool:
    """Explanations are also cached on disk unless EXWB_DISK_CACHE is false."""
    return _flag("EXWB_DISK_CACHE", default=True)


def share_passes() -> bool:
    """Methods share forward passes unless EXWB_SHARE_PASSES is false (benchmarks compare both ways)."""
    return _flag("EXWB_SHARE_PASSES", default=True)


def full_last_layer() -> bool:
    """EXWB_FULL_LAST_LAYER: encoders compute their last layer for every token (models/runtime.py)."""
    return _flag("EXWB_FULL_LAST_LAYER")


def randomized_families(default: int = 1) -> int:
    """How many randomized model families a process keeps (EXWB_RANDOMIZED_FAMILIES, a whole number >= 0)."""
    value = os.environ.get("EXWB_RANDOMIZED_FAMILIES", "").strip()
    try:
        return max(0, int(value)) if value else default
    except ValueError:
        return default


def autorun_seconds(default: float) -> float:
    """EXWB_AUTORUN_SECONDS: seconds single-input work may be estimated to take and run without asking."""
    try:
        return max(0.0, float(os.environ.get("EXWB_AUTORUN_SECONDS", default)))
    except ValueError:
        return default


def ray_address() -> str:
    """EXWB_RAY_ADDRESS as written (blank when unset)."""
    return os.environ.get("EXWB_RAY_ADDRESS", "").strip()


def run_workers() -> str:
    """EXWB_RUN_WORKERS as written (blank when unset; evaluation/runs/process_executor.py checks the number)."""
    return os.environ.get("EXWB_RUN_WORKERS", "").strip()


def aml_budget() -> str:
    """EXWB_AML_BUDGET as written (blank when unset; evaluation/aml_build.py parses it)."""
    return os.environ.get("EXWB_AML_BUDGET", "").strip()


def device_setting() -> str:
    return os.environ.get("EXWB_DEVICE", "auto").strip() or "auto"


def default_model_spec() -> str:
    return os.environ.get("EXWB_MODEL", "default").strip() or "default"


def offline_mlm_choice() -> str:
    """Which offline masked-LM recipe the name ``mlm`` stands for (``models/mlm/loading.py`` checks the word)."""
    return os.environ.get("EXWB_MLM", "mlm").strip().lower() or "mlm"


def prepare_runtime() -> None:
    """Set process-wide environment before torch / transformers are imported.

    - HF_HUB_OFFLINE=1 unless the user opted in to the hub: an unreachable hub costs ~50 s per miss.
    - OMP_WAIT_POLICY=PASSIVE: with torch's default busy-waiting OpenMP threads, small ops get ~1000x
      slower as soon as another process uses the second core (shared/notes/stack-probe.md section 6).
    """
    if not allow_hub():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def torch_threads() -> int | None:
    value = os.environ.get("EXWB_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None
