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
| EXWB_MLM             | the offline masked LM the name `mlm` stands for: mlm, mlm-plus, mlm-long, or best (the longest-trained one prepared) | mlm |
| EXWB_FAST            | 1 = `cli.py explain` runs in the fast reduced-precision mode     | 0 (full precision); metrics ignore it     |
|                      | (models/precision.py; `--fast` / `--no-fast` override it)       |                                          |
| EXWB_SHARED          | 1 = shared-server mode (a class or a lab on one server): no server path from the browser, job quotas; | 0 (a single user's machine)   |
|                      | datasets come from the built-in list, an upload, or EXWB_DATA_FOLDERS (corpora/file_access.py) |                   |
| EXWB_DATA_FOLDERS    | folders (os.pathsep-separated) whose .csv/.tsv/.jsonl/.json files, recursively, browser users may pick | none   |
| EXWB_UPLOAD_MB       | largest user dataset file, uploaded or read by path, in MB      | 25 in shared mode, 500 otherwise         |
| EXWB_UPLOAD_ROWS     | most rows read from a user dataset file                         | 50,000 in shared mode, 1,000,000 otherwise |
| EXWB_UPLOAD_SESSION_MB | total MB one browser session may upload                       | 100 in shared mode, no limit otherwise   |
| EXWB_PARSE_SECONDS   | CPU seconds one user file may take to parse in its worker process (the app always; jobs and the CLI in shared mode) | 60 |
| EXWB_PARSE_MB        | memory one user file's worker process may add while parsing, in MB | 1000                                  |
| EXWB_JOB_SLOTS       | app jobs running at once in shared mode (more wait in a fair queue) | max(1, usable cores - 1)           |
| EXWB_QUOTA_RUNNING   | running app jobs per browser session (shared mode)              | 1                                        |
| EXWB_QUOTA_QUEUED    | queued app jobs per browser session (shared mode)               | 3                                        |
| EXWB_QUOTA_CPU_SECONDS | CPU seconds per browser session in the last hour before a new job is refused (shared mode; 0 = no limit) | 1800 |
| EXWB_ADMIN_TOKEN     | the token the Jobs page asks for in shared mode (unset: the page stays locked) | unset              |
| EXWB_DISK_CACHE      | 0 = explanations are cached in memory only, not on disk          | 1                                        |
| EXWB_SHARE_PASSES    | 0 = methods run alone, sharing no forward pass (benchmarks)      | 1                                        |
| EXWB_FULL_LAST_LAYER | 1 = encoders compute their last layer for every token           | 0 (the first token only)                 |
| EXWB_RANDOMIZED_FAMILIES | randomized model families kept per process                  | 1                                        |
| EXWB_AUTORUN_SECONDS | estimated seconds single-input work may take and run unasked     | models/metering.py AUTORUN_SECONDS       |
| EXWB_RAY_ADDRESS     | Ray cluster of `--executor ray` (empty or `local`: this machine) | local                                    |
| EXWB_AML_BUDGET      | paper 004's AML recipe overrides, "name=value,..."              | none (the paper's recipe)                |
| EXWB_KF_LONG_BUDGET  | the known-feature-long document twin's recipe overrides, "name=value,..." (tests, demos) | none (its recipe) |
| EXWB_RAISE_PAGE_ERRORS | 1 = a page's exception reaches Streamlit (tests, debugging)    | 0 (a short message with a log id)        |
| EXWB_REGEX_SECONDS   | time budget of one regular-expression search over all its texts | 1 (evaluation/user_regex.py)             |
| EXWB_MEMORY_GB       | memory every pass sizes its batches from (models/memory.py)      | a share of the free GPU memory / available RAM |
| EXWB_DEVICE_SHARE    | share of the device this process may use (Ray sets it from --ray-gpus) | 1                                  |

Boolean variables read 1/true/yes/on and 0/false/no/off in any case (``parse_bool``); unset or blank, or an
unrecognised word, means the default. Every ``EXWB_*`` variable is read here and nowhere else.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import overload

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


def raise_page_errors() -> bool:
    """A page's exception goes to Streamlit instead of the short message (EXWB_RAISE_PAGE_ERRORS; the tests set it)."""
    return _flag("EXWB_RAISE_PAGE_ERRORS")


def fast_mode() -> bool:
    """Explanations in reduced precision by default (EXWB_FAST); read only by the explain entry points."""
    return _flag("EXWB_FAST")


def shared_mode() -> bool:
    """Shared-server mode (EXWB_SHARED): many browsers on one server, none of them may name a server path; job
    quotas and slots are enforced (evaluation/runs/scheduler.py)."""
    return _flag("EXWB_SHARED")


def data_folders() -> list[Path]:
    """The folders an admin opens to browser users (EXWB_DATA_FOLDERS, separated by os.pathsep)."""
    text = os.environ.get("EXWB_DATA_FOLDERS", "")
    return [Path(part).expanduser() for part in text.split(os.pathsep) if part.strip()]


@overload
def _positive_number(name: str, default: float) -> float: ...
@overload
def _positive_number(name: str, default: None) -> float | None: ...
def _positive_number(name: str, default: float | None) -> float | None:  # a float default gives a float (overloads)
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ValueError(f"{name} must be a positive number; got {text!r}.")
    return value


def upload_mb() -> float:
    """The largest user dataset file (an upload or a file read by path), in MB."""
    return _positive_number("EXWB_UPLOAD_MB", 25.0 if shared_mode() else 500.0)


def upload_rows() -> int:
    """The most rows read from one user dataset file."""
    return int(_positive_number("EXWB_UPLOAD_ROWS", 50_000 if shared_mode() else 1_000_000))


def upload_session_mb() -> float | None:
    """The MB one browser session may upload in all (None: no limit)."""
    return _positive_number("EXWB_UPLOAD_SESSION_MB", 100.0 if shared_mode() else None)


def parse_seconds() -> float:
    """CPU seconds a user file may take to parse in its worker process (corpora/isolated_parse.py)."""
    return _positive_number("EXWB_PARSE_SECONDS", 60.0)


def parse_mb() -> float:
    """MB a user file's parse may add to its worker process's address space (corpora/isolated_parse.py)."""
    return _positive_number("EXWB_PARSE_MB", 1000.0)


def cache_dir() -> Path:
    explicit = os.environ.get("EXWB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "explanation-workbench"


def uploads_dir() -> Path:
    """Where uploaded files are kept (ui/widgets/uploads.py); dataset runs read them by path."""
    return cache_dir() / "uploads"


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
    """EXWB_AML_BUDGET as written (blank when unset; evaluation/suite/aml_build.py parses it)."""
    return os.environ.get("EXWB_AML_BUDGET", "").strip()


def kf_long_budget() -> str:
    """EXWB_KF_LONG_BUDGET as written (blank when unset; evaluation/suite/known_feature_long.py parses it)."""
    return os.environ.get("EXWB_KF_LONG_BUDGET", "").strip()


def device_setting() -> str:
    return os.environ.get("EXWB_DEVICE", "auto").strip() or "auto"


def default_model_spec() -> str:
    return os.environ.get("EXWB_MODEL", "default").strip() or "default"


REGEX_SECONDS = 1.0


def regex_seconds() -> float:
    """Seconds one search with a user's regular expression may take over all its texts (EXWB_REGEX_SECONDS)."""
    try:
        value = float(os.environ.get("EXWB_REGEX_SECONDS", REGEX_SECONDS))
    except ValueError:
        return REGEX_SECONDS
    return value if value > 0 else REGEX_SECONDS


def offline_mlm_choice() -> str:
    """Which offline masked-LM recipe the name ``mlm`` stands for (``models/mlm/loading.py`` checks the word)."""
    return os.environ.get("EXWB_MLM", "mlm").strip().lower() or "mlm"


def prepare_runtime() -> None:
    """Set process-wide environment before torch / transformers are imported.

    - HF_HUB_OFFLINE=1 unless the user opted in to the hub: an unreachable hub costs ~50 s per miss.
    - OMP_WAIT_POLICY=PASSIVE: with torch's default busy-waiting OpenMP threads, small ops get ~1000x
      slower as soon as another process uses the second core (shared/notes/stack-probe.md section 6).
    """
    for name, value in runtime_environment().items():
        os.environ.setdefault(name, value)


def runtime_environment() -> dict[str, str]:
    """The variables ``prepare_runtime`` sets (those not set already), e.g. for worker processes that import torch
    before any code of theirs runs (importing the library sets none of them)."""
    wanted = {"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false",
              "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    if not allow_hub():
        wanted = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **wanted}
    return {name: value for name, value in wanted.items() if name not in os.environ}


def torch_threads() -> int | None:
    value = os.environ.get("EXWB_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _count(name: str, default: int, minimum: int = 0) -> int:
    """A whole-number setting; a blank or malformed value gives the default (an environment flag never crashes)."""
    value = os.environ.get(name, "").strip()
    return max(minimum, int(value)) if value.isdigit() else default


def job_slots() -> int:
    """App jobs that run at once in shared mode: a core is left for the pages."""
    return _count("EXWB_JOB_SLOTS", max(1, usable_cores() - 1), minimum=1)


def quota_running() -> int:
    return _count("EXWB_QUOTA_RUNNING", 1, minimum=1)


def quota_queued() -> int:
    return _count("EXWB_QUOTA_QUEUED", 3)


def quota_cpu_seconds() -> int:
    """CPU seconds a session may use in a sliding hour (0 = no limit)."""
    return _count("EXWB_QUOTA_CPU_SECONDS", 1800)


def admin_token() -> str:
    return os.environ.get("EXWB_ADMIN_TOKEN", "")


def memory_gb() -> float | None:
    """EXWB_MEMORY_GB: the memory budget every pass sizes its batches from (models/memory.py); None = the default
    share of the free device memory (GPU) or of the available RAM (CPU)."""
    return _positive_number("EXWB_MEMORY_GB", None)


def device_share() -> float:
    """EXWB_DEVICE_SHARE: the share of its device this process may use (a Ray task asking 0.5 GPU gets 0.5)."""
    share = _positive_number("EXWB_DEVICE_SHARE", 1.0)
    return min(share, 1.0)
