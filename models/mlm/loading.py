"""``load_filler(name)``: a masked LM by name, one per process.

``"mlm"`` is the offline stand-in built by ``cli.py prepare-mlm`` (``models/mlm/prepare.py``: a masked-LM head
trained on the bundled MiniLM, a small stand-in for BERT); ``"mlm-plus"`` the same trained further (``cli.py
prepare-mlm --recipe mlm-plus``), ``"mlm-long"`` much longer (``--recipe mlm-long``, resumable). ``EXWB_MLM`` picks
which one the name ``mlm`` (every method's default) stands for: ``mlm`` (the default), ``mlm-plus``, ``mlm-long``,
or ``best`` (the last of mlm-long, mlm-plus that is prepared, else mlm). Otherwise
a folder holding a ``*ForMaskedLM`` model; or a hub id
such as ``bert-base-uncased`` (paper 000's masked LM) with ``EXWB_ALLOW_HUB=1`` or already in the local Hugging
Face cache. Names are read by the classifier loader's ``resolve_spec``, so both read them the same way.

This module holds the only cache of loaded masked LMs: ``clear_loaded()`` (called after preparing a new one)
makes every user (methods, the MLM-fill removal operator, the metrics) load afresh.
"""
from __future__ import annotations

from functools import lru_cache

from transformers import AutoModelForMaskedLM, AutoTokenizer

import settings
from models import runtime
from models.errors import ModelError, ModelNotPrepared
from models.loading import load_resolved, resolve_spec
from models.mlm.filler import BUILT_IN_MLM, MaskedLMFiller
from models.mlm.recipe import RECIPE, RECIPES, MLMRecipe, find_prepared_mlm

CHOICES = (*RECIPES, "best")  # the values of EXWB_MLM


class MaskedLMNotPrepared(ModelNotPrepared):
    """The offline masked LM has not been built on this machine yet."""

    def __init__(self, name: str = BUILT_IN_MLM):
        self.name = name
        recipe = offline_recipe() if name == BUILT_IN_MLM else RECIPES.get(name, RECIPE)
        command = "python cli.py prepare-mlm" + ("" if recipe is RECIPE else f" --recipe {recipe.name}")
        ModelError.__init__(self, f"The offline masked LM '{recipe.name}' (a small stand-in for BERT, needed by Input "
                                  f"Marginalization, LIME-BERT and the MLM-fill removal operator) is not prepared "
                                  f"yet. Build it once with `{command}` (minutes on a CPU), from the Counterfactuals "
                                  f"page, or use bert-base-uncased with EXWB_ALLOW_HUB=1.")


def offline_recipe() -> MLMRecipe:
    """The recipe the name ``mlm`` stands for (``EXWB_MLM``: mlm, mlm-plus, mlm-long, or best = the longest-trained
    one that is prepared)."""
    choice = settings.offline_mlm_choice()
    if choice == "best":
        return next((r for r in reversed(RECIPES.values()) if find_prepared_mlm(r) is not None), RECIPE)
    if choice not in RECIPES:
        raise ModelError(f"EXWB_MLM is '{choice}'; use one of {', '.join(CHOICES)}.")
    return RECIPES[choice]


def _built_in() -> dict:
    """Built-in masked-LM names -> their prepared folder (or None): ``mlm`` as EXWB_MLM says, and each recipe."""
    others = {name: (lambda r=recipe: find_prepared_mlm(r)) for name, recipe in RECIPES.items() if name != BUILT_IN_MLM}
    return {BUILT_IN_MLM: lambda: find_prepared_mlm(offline_recipe()), **others}


def _from_pretrained(location: str, local_only: bool):
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=local_only)
        model = AutoModelForMaskedLM.from_pretrained(location, local_files_only=local_only, use_safetensors=True)
    except ValueError as error:
        raise ModelError(f"Cannot load '{location}' as a masked LM: {error}") from error
    except OSError as error:
        raise ModelError(f"Cannot load '{location}' as a masked LM: {str(error).splitlines()[0]}") from error
    return model, tokenizer


def load_filler(name: str = BUILT_IN_MLM, mode: str = "joint", exclude_original: bool = False,
                device: str | None = None) -> MaskedLMFiller:
    """The masked-LM filler by name: ``mlm`` (offline stand-in), a folder, or a hub id (opt-in)."""
    base = _load(name.strip() if name else "", device, str(settings.cache_dir()), settings.offline_mlm_choice())
    return base.with_options(mode=mode, exclude_original=exclude_original)


def with_fill_options(filler, mode: str | None = None, exclude_original: bool | None = None):
    """``filler`` under a method's fill options (None: leave that option as it is): a ``MaskedLMFiller``'s twin
    sharing its model when an option differs, else the filler itself (also one without options: a fill in code)."""
    wanted = {"mode": mode, "exclude_original": exclude_original}
    changed = {name: value for name, value in wanted.items() if value is not None and getattr(filler, name, None) != value}
    with_options = getattr(filler, "with_options", None)
    return filler if with_options is None or not changed else with_options(**changed)


@lru_cache(maxsize=4)
def _load(name: str, device: str | None, cache_dir: str, choice: str) -> MaskedLMFiller:
    """One masked LM per (name, device, cache folder, EXWB_MLM) and process; the wrappers share it."""
    resolved = resolve_spec(name, _built_in(), MaskedLMNotPrepared, what="masked LM")
    chosen = runtime.choose_device(device)
    model, tokenizer = load_resolved(resolved, _from_pretrained,
                                     f"'{BUILT_IN_MLM}' (build it with `python cli.py prepare-mlm`)")
    fingerprint = resolved.manifest["weights_sha256"][:16] if resolved.manifest else None
    shown = resolved.manifest.get("name", resolved.name) if resolved.manifest else resolved.name  # mlm -> mlm-plus
    return MaskedLMFiller(model, tokenizer, name=shown, source=resolved.source, manifest=resolved.manifest,
                          fingerprint=fingerprint, device=chosen)


def clear_loaded() -> None:
    """Forget every loaded masked LM (after preparing a new one): the next ``load_filler`` reads it afresh."""
    _load.cache_clear()
