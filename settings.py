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
| EXWB_RAISE_PAGE_ERRORS | 1 = a page's exception reaches Streamlit (tests, debugging)    | 0 (a short message with a log id)        |
| EXWB_REGEX_SECONDS   | time budget of one regular-expression search over all its texts | 1 (evaluation/user_regex.py)             |
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


def _flag(name: str) -> bool:
    return parse_bool(os.environ.get(name, ""), default=False)


def allow_hub() -> bool:
    return _flag("EXWB_ALLOW_HUB")


def raise_page_errors() -> bool:
    """A page's exception goes to Streamlit instead of the short message (EXWB_RAISE_PAGE_ERRORS; the tests set it)."""
    return _flag("EXWB_RAISE_PAGE_ERRORS")


def fast_mode() -> bool:
    """Explanations in reduced precision by default (EXWB_FAST); read only by the explain entry points."""
    return _flag("EXWB_FAST")


def cache_dir() -> Path:
    explicit = os.environ.get("EXWB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "explanation-workbench"


def data_dir_candidates() -> list[Path]:
    """Places the datasets are looked for, in order."""
    places = []
    explicit = os.environ.get("EXWB_DATA_DIR")
    if explicit:
        places.append(Path(explicit).expanduser())
    places.append(ROOT.parent / "shared" / "data")
    return places


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
    if not allow_hub():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def torch_threads() -> int | None:
    value = os.environ.get("EXWB_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None
