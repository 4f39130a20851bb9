"""Copy-on-write model randomization for sanity checks (paper 000's head check, paper 003's layer randomization).

The classifier the app shares between users and pages is **never touched**. A randomized model is a new module
tree (``copy.deepcopy`` with a memo) whose parameters and buffers are the *same tensor objects* as the source
model's, except inside the units being re-initialized, which get fresh tensors. So a randomized stage costs only
the memory of the randomized units, and a cascade (head, block L-1, ..., embeddings) never holds more than the
original plus one copy of the weights: each stage reuses the previous stage's already-randomized units.

Units come from the module-tree rule (``models/architectures.py``): the head modules, each transformer block
(attention + MLP as one unit, paper 003 §3.3; both stacks of an encoder-decoder) and the embedding modules.

Re-initialization (``init``):
- ``"model"``: the model's own ``_init_weights`` (e.g. N(0, 0.02) weights, zero biases, unit LayerNorm);
- ``"normal"``: ``torch.nn.init.normal_`` on **every** parameter of the unit, LayerNorm gains included
  (paper 003's code, ``layer_randomization.py``: N(0, 1)).
The random values of a unit depend only on (seed, init, unit path), so cascading stage k computed directly equals
stage k reached through the cascade, bit for bit.

Fingerprints: ``sha256(base fingerprint, mode, stage, init, seed)``, so every randomized explanation has its own
cache key and provenance.
"""
from __future__ import annotations

import copy
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

import torch  # noqa: E402

import settings
from models import runtime  # noqa: F401  (environment before torch)
from models.architectures import Architecture, get_module, module_at, read_architecture
from models.classifier import TextClassifier
from models.errors import ArchitectureError, ModelError

INITS = {"model": "the model's own initialization", "normal": "N(0, 1) for every parameter (paper 003)"}
MODES = {"cascading": "cascading (top down, keeps earlier stages randomized)",
         "independent": "independent (one unit at a time)"}
HEAD_INITS = {"xavier": "Xavier-uniform weight, bias unchanged (paper 000)"}
ORIGINAL = "original"

# The global torch RNG (used by the model's own initializers) is process-wide: serialize its seeded use.
_RNG_LOCK = threading.Lock()


@dataclass(frozen=True)
class Stage:
    """One step of the randomization: a named group of module paths re-initialized together."""

    name: str  # "head", "block 5", ..., "block 0", "embeddings"
    paths: tuple[str, ...]
    index: int  # position in stages(): 0 = head


def _architecture(classifier: TextClassifier) -> Architecture:
    """The classifier's parts by the module-tree rule; a message naming what was not found otherwise."""
    if classifier.architecture is not None:
        return classifier.architecture
    model_type = getattr(classifier.model.config, "model_type", "?")
    try:
        read_architecture(classifier.model)
        reason = "it was marked unreadable"
    except ArchitectureError as error:
        reason = str(error)
    raise ModelError(f"Model '{classifier.name}' (type '{model_type}') cannot be randomized: its parts could not be "
                     f"found ({reason}). It has no entry in the architecture table (models/architectures.py) "
                     f"either; add one there.")


def _stack_label(stack: str, arch: Architecture) -> str:
    """"" for a single stack; the stack's parent name ("encoder", "decoder") where there are several."""
    if not arch.encoder_decoder:
        return ""
    parts = stack.split(".")
    names = [s.split(".")[-2] if s.count(".") else s for s in arch.all_stacks]
    label = parts[-2] if len(parts) > 1 else parts[-1]
    return (label if names.count(label) == 1 else f"stack {arch.all_stacks.index(stack)}") + " "


def stages(classifier: TextClassifier) -> list[Stage]:
    """The randomization stages from the top down: head, block L-1, ..., block 0, embeddings (paper 003 §3.3,
    Figs. 4.6-4.7); an encoder-decoder: head, decoder blocks, decoder input (modules between the stacks), encoder
    blocks, embeddings."""
    arch = _architecture(classifier)
    model = classifier.model
    between = dict(arch.between)
    out = [Stage("head", tuple(p for p in arch.head if get_module(model, p) is not None), 0)]
    for stack in reversed(arch.all_stacks):
        blocks = get_module(model, stack)
        if not isinstance(blocks, torch.nn.ModuleList):
            raise ModelError(f"Model '{classifier.name}' has no module '{stack}' (its blocks).")
        label = _stack_label(stack, arch)
        for i in reversed(range(len(blocks))):
            out.append(Stage(f"{label}block {i}", (f"{stack}.{i}",), len(out)))
        if between.get(stack):
            out.append(Stage(f"{label}input", between[stack], len(out)))
    embeddings = tuple(p for p in arch.embeddings if get_module(model, p) is not None)
    out.append(Stage("embeddings", embeddings, len(out)))
    return out


def stage_names(classifier: TextClassifier) -> list[str]:
    """x-axis of the sanity curves: original, head, block L-1, ..., embeddings."""
    return [ORIGINAL] + [s.name for s in stages(classifier)]


def find_stage(classifier: TextClassifier, stage: str | int | Stage) -> Stage:
    all_stages = stages(classifier)
    if isinstance(stage, Stage):
        return stage
    if isinstance(stage, int):
        if not 0 <= stage < len(all_stages):
            raise ModelError(f"Stage {stage} is out of range (0..{len(all_stages) - 1}).")
        return all_stages[stage]
    for s in all_stages:
        if s.name == stage:
            return s
    raise ModelError(f"Unknown stage '{stage}'. Stages: {', '.join(s.name for s in all_stages)}.")


def randomized_fingerprint(base: str, mode: str, stage: str, init: str, seed: int) -> str:
    digest = hashlib.sha256("\x1f".join(["randomized", base, mode, stage, init, str(int(seed))]).encode())
    return digest.hexdigest()[:16]


def _tensors(module: torch.nn.Module) -> list[torch.Tensor]:
    return list(module.parameters()) + list(module.buffers())


def _copy_except(model: torch.nn.Module, units: list[str]) -> torch.nn.Module:
    """A copy of ``model`` sharing every parameter and buffer except those inside ``units`` (which are cloned)."""
    fresh = {id(t) for path in units for t in _tensors(module_at(model, path))}
    memo = {id(t): t for t in _tensors(model) if id(t) not in fresh}
    return copy.deepcopy(model, memo)


def module_device(module: torch.nn.Module) -> torch.device:
    first = next(iter(module.parameters()), None)
    return first.device if first is not None else torch.device("cpu")


def _unit_seed(seed: int, init: str, path: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{int(seed)}\x1f{init}\x1f{path}".encode()).digest()[:8], "little") >> 1


@torch.no_grad()
def _reinitialize(model: torch.nn.Module, path: str, init: str, seed: int) -> None:
    module = module_at(model, path)
    tensors = _tensors(module)
    for t in tensors:
        if hasattr(t, "_is_hf_initialized"):  # transformers' init helpers skip tensors flagged as loaded
            delattr(t, "_is_hf_initialized")
    unit_seed = _unit_seed(seed, init, path)
    if init == "normal":
        generator = torch.Generator(device=module_device(module)).manual_seed(unit_seed)
        for parameter in module.parameters():
            # paper 003 (layer_randomization.py): torch.nn.init.normal_ on every parameter of the unit
            torch.nn.init.normal_(parameter, mean=0.0, std=1.0, generator=generator)
    elif init == "model":
        init_fn = getattr(model, "_init_weights", None)
        if init_fn is None:
            raise ModelError("This model has no own initializer (_init_weights); use init='normal'.")
        submodules = list(module.modules())
        device = module_device(module)
        devices = [device.index or 0] if device.type == "cuda" else []
        with _RNG_LOCK, torch.random.fork_rng(devices=devices):
            torch.manual_seed(unit_seed)
            for sub in reversed(submodules):  # children before parents, like Module.apply
                init_fn(sub)
    else:
        raise ModelError(f"Unknown initialization '{init}'. Choose from: {', '.join(INITS)}.")


def randomized(classifier: TextClassifier, stage: str | int | Stage, mode: str = "cascading", init: str = "model",
               seed: int = 0) -> TextClassifier:
    """A new classifier with ``stage`` randomized (cascading: and every stage above it). The input is untouched."""
    if mode not in MODES:
        raise ModelError(f"Unknown randomization mode '{mode}'. Choose from: {', '.join(MODES)}.")
    if init not in INITS:
        raise ModelError(f"Unknown initialization '{init}'. Choose from: {', '.join(INITS)}.")
    target = find_stage(classifier, stage)
    chosen = stages(classifier)[: target.index + 1] if mode == "cascading" else [target]
    paths = [p for s in chosen for p in s.paths]
    model = _copy_except(classifier.model, paths)
    for path in paths:
        _reinitialize(model, path, init, seed)
    fingerprint = randomized_fingerprint(classifier.fingerprint, mode, target.name, init, seed)
    return classifier.with_model(model, fingerprint, name=f"{classifier.name} [{mode}: {target.name}, {init}, "
                                                          f"seed {seed}]")


def cascade(classifier: TextClassifier, init: str = "model", seed: int = 0,
            upto: str | int | None = None) -> Iterator[tuple[Stage, TextClassifier]]:
    """Cascading randomization, top down; each stage copies only the newly randomized unit from the previous stage.

    Yields (stage, randomized classifier). Holding only the latest one keeps memory at one extra copy of the model
    at most (the randomized units); unrandomized weights are shared with the original.
    """
    if init not in INITS:
        raise ModelError(f"Unknown initialization '{init}'. Choose from: {', '.join(INITS)}.")
    last = find_stage(classifier, upto).index if upto is not None else None
    previous = classifier.model
    for stage in stages(classifier):
        if last is not None and stage.index > last:
            return
        model = _copy_except(previous, list(stage.paths))
        for path in stage.paths:
            _reinitialize(model, path, init, seed)
        fingerprint = randomized_fingerprint(classifier.fingerprint, "cascading", stage.name, init, seed)
        yield stage, classifier.with_model(model, fingerprint, name=f"{classifier.name} [cascading: {stage.name}, "
                                                                    f"{init}, seed {seed}]")
        previous = model


def iterate(classifier: TextClassifier, mode: str = "cascading", init: str = "model",
            seed: int = 0) -> Iterator[tuple[Stage, TextClassifier]]:
    """Every stage in order, for either mode (cascading reuses the previous stage)."""
    if mode == "cascading":
        yield from cascade(classifier, init=init, seed=seed)
        return
    for stage in stages(classifier):
        yield stage, randomized(classifier, stage, mode=mode, init=init, seed=seed)


def head_output_layer(classifier: TextClassifier) -> tuple[str, torch.nn.Linear]:
    """The last linear layer of the classification head (paper 000 randomizes ``model.classifier``)."""
    arch = _architecture(classifier)
    for path in reversed(arch.head):
        module = get_module(classifier.model, path)
        if module is None:
            continue
        linears = [(name, m) for name, m in module.named_modules() if isinstance(m, torch.nn.Linear)]
        if linears:
            name, layer = linears[-1]
            return (f"{path}.{name}" if name else path), layer
    raise ModelError(f"Model '{classifier.name}' has no linear layer in its head ({', '.join(arch.head)}).")


@torch.no_grad()
def randomize_head(classifier: TextClassifier, seed: int, init: str = "xavier") -> TextClassifier:
    """Paper 000 §3.3 / App. E: re-initialize only the classifier's last layer weight
    (``torch.nn.init.xavier_uniform_`` under a seed); the bias is unchanged. Returns a new classifier."""
    if init not in HEAD_INITS:
        raise ModelError(f"Unknown head initialization '{init}'. Choose from: {', '.join(HEAD_INITS)}.")
    path, layer = head_output_layer(classifier)
    fresh = id(layer.weight)
    memo = {id(t): t for t in _tensors(classifier.model) if id(t) != fresh}
    model = copy.deepcopy(classifier.model, memo)
    weight = model.get_parameter(f"{path}.weight")
    generator = torch.Generator(device="cpu").manual_seed(int(seed))
    values = torch.empty(weight.shape, dtype=torch.float32)
    torch.nn.init.xavier_uniform_(values, generator=generator)
    weight.copy_(values.to(weight.dtype))
    fingerprint = randomized_fingerprint(classifier.fingerprint, "head-only", path, init, seed)
    return classifier.with_model(model, fingerprint, name=f"{classifier.name} [head {init}, seed {seed}]")


def shared_fraction(original: TextClassifier, other: TextClassifier) -> float:
    """Share of ``other``'s parameter elements stored in the same tensors as ``original``'s (memory accounting)."""
    base = {t.data_ptr() for t in original.model.parameters()}
    total = shared = 0
    for t in other.model.parameters():
        total += t.numel()
        shared += t.numel() if t.data_ptr() in base else 0
    return shared / total if total else 0.0


# ----- per-process reuse: the app and dataset runs rebuild nothing between reruns and examples ---------------------
# A whole family (every stage of one mode/init/seed) costs at most one extra copy of the weights: cascading stages
# share their randomized units with each other, independent stages randomize disjoint units. Only the most recent
# families are kept (EXWB_RANDOMIZED_FAMILIES, default 1), so memory stays at the original + one copy.
_FAMILIES: OrderedDict[tuple, list[tuple[Stage, TextClassifier]]] = OrderedDict()
_HEADS: OrderedDict[tuple, TextClassifier] = OrderedDict()
_FAMILY_LOCK = threading.Lock()


def _max_families() -> int:
    return settings.randomized_families()


def family(classifier: TextClassifier, mode: str = "cascading", init: str = "model",
           seed: int = 0) -> list[tuple[Stage, TextClassifier]]:
    """Every stage of one randomization (cached per process; the most recent family only)."""
    key = (classifier.fingerprint, str(classifier.device), mode, init, int(seed))
    with _FAMILY_LOCK:
        if key in _FAMILIES:
            _FAMILIES.move_to_end(key)
            return _FAMILIES[key]
        built = list(iterate(classifier, mode=mode, init=init, seed=seed))
        limit = _max_families()
        if limit:
            _FAMILIES[key] = built
            while len(_FAMILIES) > limit:
                _FAMILIES.popitem(last=False)
        return built


def cached_head(classifier: TextClassifier, seed: int, init: str = "xavier") -> TextClassifier:
    """``randomize_head`` kept per process (a head is a few kB: only its weight is new)."""
    key = (classifier.fingerprint, str(classifier.device), int(seed), init)
    with _FAMILY_LOCK:
        if key not in _HEADS:
            _HEADS[key] = randomize_head(classifier, seed, init)
            while len(_HEADS) > 16:
                _HEADS.popitem(last=False)
        _HEADS.move_to_end(key)
        return _HEADS[key]


def clear_cache() -> None:
    with _FAMILY_LOCK:
        _FAMILIES.clear()
        _HEADS.clear()
