"""Where the parts of a classifier live, read from its module tree (one rule for every architecture).

The rule, for any ``*ForSequenceClassification`` model:
- **stacks of blocks**: the ``nn.ModuleList``s whose children are all of one class (not nested in another such list);
  a decoder or encoder has one (the longest), an encoder-decoder two (``config.is_encoder_decoder``: the two
  with the most parameters), in the order the forward pass runs them;
- **embeddings**: the input embedding (``get_input_embeddings()``) and every module the forward pass calls
  before the first block, plus weights it reads without calling their module (relative-position tables that every
  block reads, e.g. DeBERTa's ``rel_embeddings``);
- **head**: every module called after the last block (final norms, pooler, classifier / score);
- modules called between two stacks (BART's decoder position embeddings, T5's encoder ``final_layer_norm``) are
  the "input" of the stack after them.
The call order comes from one forward pass of a four-token dummy input with hooks. Layer randomization walks the
blocks from the top down (decoder, then encoder) and re-initializes the head first and the embeddings last.

``EXCEPTIONS`` keeps the architectures the rule reads wrongly (none of the families tested in
``tests/models/test_any_architecture.py``); a model the rule cannot read gets an ``ArchitectureError`` naming what
was not found.
"""
from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass

import torch

from models.errors import ArchitectureError


@dataclass(frozen=True)
class Architecture:
    model_type: str
    blocks: str  # dotted path of the stack of blocks next to the head (the decoder of an encoder-decoder)
    embeddings: tuple[str, ...]  # dotted paths of the modules that run before the first block
    head: tuple[str, ...]  # dotted paths of the modules that run after the last block, in call order
    position_offset: int = 0  # positions reserved by the model (RoBERTa's padding offset)
    summary_token: str = "first"  # the token the head reads: "first" ([CLS]), "last" (decoders), "eos" (enc-dec)
    stacks: tuple[str, ...] = ()  # every stack of blocks in forward order (encoder, decoder); () = (blocks,)
    # modules called between two stacks, as (the stack they feed, their paths)
    between: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str = "module tree"  # "module tree" or "exception table"

    @property
    def all_stacks(self) -> tuple[str, ...]:
        return self.stacks or (self.blocks,)

    @property
    def causal(self) -> bool:
        """A decoder-only model: causal self-attention, the head reads the last token."""
        return self.summary_token == "last"

    @property
    def encoder_decoder(self) -> bool:
        return len(self.all_stacks) > 1


# Architectures the module-tree rule reads wrongly, by model type (empty: keep it for the exceptions that come).
EXCEPTIONS: dict[str, Architecture] = {}

_READ: weakref.WeakKeyDictionary[torch.nn.Module, Architecture] = weakref.WeakKeyDictionary()


def get_module(model: torch.nn.Module, path: str) -> torch.nn.Module | None:
    """The submodule at a dotted path, or None where the model has none (e.g. BERT without a pooler)."""
    module: object = model
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module if isinstance(module, torch.nn.Module) else None


def module_at(model: torch.nn.Module, path: str) -> torch.nn.Module:
    """The submodule at a dotted path the architecture names; ArchitectureError where the model has none."""
    module = get_module(model, path)
    if module is None:
        raise ArchitectureError(f"no module at '{path}' in {type(model).__name__}")
    return module


def stack_at(model: torch.nn.Module, path: str) -> torch.nn.ModuleList:
    """The stack of blocks at a dotted path (``Architecture.all_stacks``); ArchitectureError where there is none."""
    blocks = get_module(model, path)
    if not isinstance(blocks, torch.nn.ModuleList):
        raise ArchitectureError(f"no stack of blocks at '{path}' in {type(model).__name__}")
    return blocks


def input_embedding(model: torch.nn.Module) -> torch.nn.Embedding:
    """The model's token embedding table (transformers' ``get_input_embeddings()``); ArchitectureError if none."""
    getter = getattr(model, "get_input_embeddings", None)
    embedding = getter() if callable(getter) else None
    if not isinstance(embedding, torch.nn.Embedding):
        raise ArchitectureError(f"no input embedding table: get_input_embeddings() of {type(model).__name__} "
                                f"returned {type(embedding).__name__}")
    return embedding


def architecture_of(model: torch.nn.Module) -> Architecture | None:
    """The model's parts, or None when the rule cannot read them (``read_architecture`` says why)."""
    try:
        return read_architecture(model)
    except ArchitectureError:
        return None


def read_architecture(model: torch.nn.Module) -> Architecture:
    """The model's parts by the module-tree rule (cached per model object); ArchitectureError when unreadable."""
    if model in _READ:
        return _READ[model]
    model_type = getattr(getattr(model, "config", None), "model_type", "") or type(model).__name__
    arch = EXCEPTIONS.get(model_type) or _read(model, model_type)
    _READ[model] = arch
    return arch


# ----- the rule ------------------------------------------------------------------------------------------------
def _block_lists(model: torch.nn.Module) -> dict[str, torch.nn.ModuleList]:
    """Every ModuleList of >= 1 children of one class with parameters, not nested inside another such list."""
    found: dict[str, torch.nn.ModuleList] = {}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.ModuleList) or len(module) == 0:
            continue
        if len({type(child) for child in module}) != 1 or not any(True for _ in module.parameters()):
            continue
        if any(name.startswith(outer + ".") for outer in found):
            continue
        found[name] = module
    return found


def _size(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _dummy_input(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Four token ids the model accepts: an ordinary token three times and the end-of-sequence token (BART and T5
    pool the last </s>)."""
    config = getattr(model, "config", None)
    vocab = input_embedding(model).num_embeddings
    specials = {getattr(config, f"{k}_token_id", None) for k in ("pad", "bos", "eos", "decoder_start")}
    ordinary = next(i for i in range(vocab) if i not in specials)
    eos = getattr(config, "eos_token_id", None)
    eos = eos[0] if isinstance(eos, (list, tuple)) else eos
    ids = [ordinary] * 3 + [eos if isinstance(eos, int) and 0 <= eos < vocab else ordinary]
    device = next(model.parameters()).device
    return {"input_ids": torch.tensor([ids], device=device), "attention_mask": torch.ones((1, 4), dtype=torch.long,
                                                                                          device=device)}


def _call_order(model: torch.nn.Module, paths: dict[torch.nn.Module, str]) -> dict[str, int]:
    """Path -> rank of its first call in one forward pass of a dummy input."""
    order: dict[str, int] = {}

    def hook(module, _args):
        order.setdefault(paths[module], len(order))

    handles = [module.register_forward_pre_hook(hook) for module in paths]
    try:
        with torch.no_grad():
            model(**_dummy_input(model))
    except Exception as error:  # noqa: BLE001 - any failure of the probe is reported as "cannot be read"
        raise ArchitectureError(f"its module tree could not be traced: a forward pass of a 4-token dummy input "
                                f"failed ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
                                ) from error
    finally:
        for handle in handles:
            handle.remove()
    return order


def _owners(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    """Every module that directly holds a parameter (tied parameters count once, at their first owner)."""
    seen: set[int] = set()
    owners: dict[str, torch.nn.Module] = {}
    for name, module in model.named_modules():
        fresh = [p for p in module.parameters(recurse=False) if id(p) not in seen]
        seen.update(id(p) for p in fresh)
        if fresh:
            owners[name] = module
    return owners


def _collapse(model: torch.nn.Module, leaves: list[str], protected: tuple[str, ...]) -> tuple[str, ...]:
    """Replace groups of leaf paths by their highest ancestor whose parameters all belong to the group (and which
    holds no stack of blocks), keeping the call order: ("bert.embeddings",) rather than its four sub-modules."""
    group = {id(p) for leaf in leaves for p in module_at(model, leaf).parameters(recurse=False)}
    out: list[str] = []
    for leaf in leaves:
        best = leaf
        parts = leaf.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            parent = ".".join(parts[:cut])
            if any(s == parent or s.startswith(parent + ".") for s in protected):
                break
            params = [id(p) for p in module_at(model, parent).parameters()]
            if not params or not set(params) <= group:
                break
            best = parent
        if best not in out and not any(best.startswith(o + ".") for o in out):
            out = [o for o in out if not o.startswith(best + ".")] + [best]
    return tuple(out)


def _position_offset(model: torch.nn.Module) -> int:
    """Positions a model reserves below its first real one: RoBERTa / MPNet count positions from padding_idx + 1."""
    limit = getattr(model.config, "max_position_embeddings", None)
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Embedding) and "position" in name and module.num_embeddings == limit \
                and module.padding_idx is not None:
            return int(module.padding_idx) + 1
    return 0


def _is_causal(blocks: torch.nn.ModuleList) -> bool:
    """Decoder blocks declare causal self-attention (``is_causal`` on their attention module)."""
    flags = [bool(m.is_causal) for m in blocks[0].modules() if isinstance(getattr(m, "is_causal", None), bool)]
    return bool(flags) and flags[0]


def _read(model: torch.nn.Module, model_type: str) -> Architecture:
    config = getattr(model, "config", None)
    getter = getattr(model, "get_input_embeddings", None)
    embedding = getter() if callable(getter) else None
    if not isinstance(embedding, torch.nn.Module):
        raise ArchitectureError(f"no input embedding: get_input_embeddings() of {type(model).__name__} returned "
                                f"{type(embedding).__name__}")
    lists = _block_lists(model)
    if not lists:
        raise ArchitectureError(f"no stack of blocks: {type(model).__name__} has no nn.ModuleList of identical "
                                f"modules")
    encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
    if encoder_decoder:
        if len(lists) < 2:
            raise ArchitectureError("only one stack of blocks in an encoder-decoder (expected an encoder and a "
                                    "decoder stack)")
        chosen = sorted(lists, key=lambda n: -_size(lists[n]))[:2]
    else:
        chosen = [max(lists, key=lambda n: (len(lists[n]), _size(lists[n])))]
    owners = _owners(model)
    in_stack = {name: next((s for s in chosen if name.startswith(s + ".")), None) for name in owners}
    probe = {module: name for name, module in owners.items() if in_stack[name] is None}
    probe.update({lists[s][i]: f"{s}.{i}" for s in chosen for i in range(len(lists[s]))})
    order = _call_order(model, probe)
    missing = [f"{s}.{i}" for s in chosen for i in range(len(lists[s])) if f"{s}.{i}" not in order]
    if len(missing) == sum(len(lists[s]) for s in chosen):
        raise ArchitectureError(f"no stack of blocks that the forward pass runs (candidates: {', '.join(chosen)})")
    chosen = sorted(chosen, key=lambda s: order.get(f"{s}.0", len(order)))  # forward order: encoder first
    first = {s: min(order.get(f"{s}.{i}", len(order)) for i in range(len(lists[s]))) for s in chosen}
    last = {s: max(order.get(f"{s}.{i}", -1) for i in range(len(lists[s]))) for s in chosen}
    embedding_path = next(n for n, m in model.named_modules() if m is embedding)
    groups: dict[str, list[str]] = defaultdict(list)  # "embeddings" | "head" | the stack they feed
    for name in sorted((n for n in owners if in_stack[n] is None), key=lambda n: order.get(n, -1)):
        rank = order.get(name)
        if name == embedding_path or rank is None or rank < first[chosen[0]]:
            groups["embeddings"].append(name)  # never called: a table the blocks read directly
        elif rank > last[chosen[-1]]:
            groups["head"].append(name)
        else:
            after = [s for s in chosen if first[s] > rank]
            groups[after[0] if after else "head"].append(name)
    head = _collapse(model, groups["head"], tuple(chosen))
    if not head:
        raise ArchitectureError("no classification head: no module with parameters runs after the last block")
    summary = "eos" if encoder_decoder else ("last" if _is_causal(lists[chosen[-1]]) else "first")
    return Architecture(model_type=model_type, blocks=chosen[-1],
                        embeddings=_collapse(model, groups["embeddings"], tuple(chosen)), head=head,
                        position_offset=_position_offset(model), summary_token=summary,
                        stacks=tuple(chosen) if encoder_decoder else (),
                        between=tuple((s, _collapse(model, groups[s], tuple(chosen))) for s in chosen if groups[s]))
