"""Adversarial attacks on explanations (paper 003, sections 2.3 and 3.5, after Ghorbani et al. 2019).

A perturbation delta of the word embeddings, with ||delta||_inf <= epsilon (kept there by clamping, as the thesis
code does), is optimized so that the explanation moves while the prediction does not:

- ``unconstrained`` (Ghorbani's top-k attack): minimize the clean top-k tokens' share of importance in the attacked
  explanation, sum_{i in topk(a_x)} |a_{x+d,i}| / sum|a_{x+d}|; the returned iterate is the best one whose predicted
  class is still the original class (none: the clean input, zero change).
- ``constrained`` (the thesis's variant, section 2.3): alpha * that share + beta * (m(x) - m(x+d))^2 with m the predicted
  class's probability, so the attacked input keeps the model's confidence too; the best iterate on that objective.

The explanation term must reach delta, so the attribution is differentiated with ``create_graph=True`` (double
back-propagation). The thesis code detaches it (its gradients come from ``.grad.data``): there the explanation term
reaches delta only through the "x input" factor, and for plain gradients not at all (notes 003, section 6.3 item 8).
The preset ``paper-003-code`` reproduces that, with the code's U[0, 1) start, its logit matching and its last-iterate
pick for the constrained attack. Attributions are the signed sum over the hidden dimension (thesis code) and only the
word tokens are perturbed and ranked (special tokens are never changed here; the thesis code perturbs every
position).

This file holds the entry points (one input, many inputs in length-sorted batches); the parts are ``config.py``
(settings, presets, cost), ``result.py``, ``attribution.py`` (the differentiable attributions),
``optimization.py`` (the loop) and ``documents.py`` (a document read in windows: the attack over its windows, under
the document's rule; ``long_inputs.py`` says which long inputs are refused).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from evaluation.adversarial.config import ATTACKED_METHODS, AttackConfig, loop_points
from evaluation.adversarial.documents import DocumentState, optimize_document
from evaluation.adversarial.long_inputs import long_input_refusal
from evaluation.adversarial.optimization import InputState, optimize
from evaluation.adversarial.result import AttackError, AttackResult
from explainers.shared_passes import batches_inputs
from models import Encoding, TextClassifier, memory
from models.attention_kernel import eager_attention
from models.windows import DocumentEncoding


def attack(classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig | None = None,
           progress: Callable[[int, int, float], None] | None = None,
           should_stop: Callable[[], bool] | None = None, allow_long: bool = False) -> AttackResult:
    """Attack ``method``'s explanation of the predicted class on one input or document (see the module
    docstring; ``allow_long``: a document over ``documents.MAX_ATTACK_WINDOWS`` windows too)."""
    result = attack_many(classifier, [encoding], method, config, progress, should_stop, allow_long)[0]
    if isinstance(result, AttackError):
        raise result
    return result


# What one more batch costs per optimization step, in padded tokens: measured on the default model (2 threads, the
# shared machine, Gradient x Input, 16 SST-2 dev sentences): a step costs about 0.14 CPU s per batch + 2.9 ms per
# padded token (one group of 16 padded to 39 tokens: 13.5 CPU s for 10 steps; groups of 9, 5, 2: 10.6 s;
# of 5, 4, 3, 2, 2: 12.3 s), so a batch is worth about 48 padded tokens
BATCH_OVERHEAD_TOKENS = 48


def attack_groups(classifier: TextClassifier, encodings: Sequence[Encoding], rows_per_input: int) -> list[list[int]]:
    """Indices of ``encodings`` in the batches ``attack_many`` optimizes together: sorted by length, then cut
    into the runs of neighbours that cost least per step (padded tokens x rows + ``BATCH_OVERHEAD_TOKENS`` per
    batch: fewer batches against less padding), each within the model's token budget (``max_batch_tokens``: rows x
    padded width, each input taking ``rows_per_input`` rows, IG's path points) unless it holds one input. A model
    whose padding moves the position its head reads (decoders, encoder-decoders) attacks one input per batch. A
    document read in windows is a batch of its own (its windows are the batch)."""
    documents = [[i] for i, e in enumerate(encodings) if isinstance(e, DocumentEncoding)]
    order = sorted((i for i, e in enumerate(encodings) if not isinstance(e, DocumentEncoding)),
                   key=lambda i: encodings[i].n_tokens)
    if not batches_inputs(classifier):
        return [[i] for i in order] + documents
    longest = max((encodings[i].n_tokens for i in order), default=1)
    # the token budget: max_batch_tokens, within what the memory model gives a double backward (models/memory.py)
    budget = min(classifier.max_batch_tokens,
                 memory.budget_tokens(classifier.memory_shape, classifier.device, longest, "double_backward"))
    # cheapest[j]: the least cost of the first j inputs in order, cut[j]: where its last batch starts
    cheapest, cut = [0.0] + [float("inf")] * len(order), [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        width = encodings[order[end - 1]].n_tokens  # the longest of any batch ending here: sorted
        for start in range(end - 1, -1, -1):
            tokens = (end - start) * rows_per_input * width
            if end - start > 1 and tokens > budget:
                break
            cost = cheapest[start] + BATCH_OVERHEAD_TOKENS + tokens
            if cost < cheapest[end]:
                cheapest[end], cut[end] = cost, start
    groups: list[list[int]] = []
    end = len(order)
    while end > 0:
        groups.insert(0, order[cut[end]:end])
        end = cut[end]
    return groups + documents


def rows_per_input(method: str, config: AttackConfig) -> int:
    """Rows one input takes in an optimization step's batch: IG's loop path points, else 1."""
    return loop_points(method, config)


def attack_many(classifier: TextClassifier, encodings: Sequence[Encoding], method: str,
                config: AttackConfig | None = None, progress: Callable[[int, int, float], None] | None = None,
                should_stop: Callable[[], bool] | None = None, allow_long: bool = False
                ) -> list[AttackResult | AttackError]:
    """``attack`` of every input, in input order, with the inputs of each ``attack_groups`` batch optimized as one:
    their deltas padded into one batch (attention mask), one forward, backward and double backward per step for
    all of them, the summed loss (the deltas are independent: each gets its own gradient), Adam per element (one
    parameter per input: identical to separate optimizers) under the same schedule, and each input's own early
    stop, best iterate and class check; a finished input leaves the batch. Equal to ``attack`` per input up to
    float32 reordering. An input too short to attack gets its ``AttackError`` in its place. A document read in
    windows is attacked alone over its windows (``documents.py``); over ``documents.MAX_ATTACK_WINDOWS`` windows
    only with ``allow_long`` (else its refusal, with the cost estimate, in its place).
    ``progress(step, steps, mean objective)`` and ``should_stop`` act on the batch running."""
    config = config or AttackConfig()
    if method not in ATTACKED_METHODS:
        raise AttackError(f"The attack needs a differentiable method; '{method}' is not one. Choose from: "
                          f"{', '.join(ATTACKED_METHODS)}.")
    results: list[AttackResult | AttackError | None] = [None] * len(encodings)
    # the double back-propagation needs the eager attention kernel: SDPA's CPU backward has no derivative itself
    with eager_attention(classifier.model):
        for group in attack_groups(classifier, encodings, rows_per_input(method, config)):
            _attack_group(classifier, encodings, group, method, config, progress, should_stop, results, allow_long)
    return cast("list[AttackResult | AttackError]", results)  # every input's group filled its place


def _attack_group(classifier: TextClassifier, encodings: Sequence[Encoding], group: list[int], method: str,
                  config: AttackConfig, progress, should_stop, results: list, allow_long: bool = False) -> None:
    """One batch of ``attack_many``. Out of memory (models/memory.py): the inputs not finished yet start again
    in two halves (finished ones keep their results) and the limit is remembered for the process."""
    inputs = []
    for index in group:
        refusal = long_input_refusal(classifier, encodings[index], method, config, allow_long)  # never a silent cut
        if refusal:
            results[index] = AttackError(refusal)
            continue
        document = encodings[index]
        if isinstance(document, DocumentEncoding):  # alone in its group (attack_groups)
            try:
                document_state = DocumentState.prepare_document(classifier, document, method, config, index)
            except AttackError as error:
                results[index] = error
                continue
            optimize_document(document_state, method, config, progress, should_stop)
            results[index] = document_state.result(classifier, method, config)
            continue
        try:
            inputs.append(InputState.prepare(classifier, encodings[index], method, config, index))
        except AttackError as error:
            results[index] = error
    pending = [state.index for state in inputs]
    try:
        for state in optimize(classifier, inputs, method, config, progress, should_stop):
            results[state.index] = state.result(classifier, method, config)
            pending.remove(state.index)
    except Exception as error:  # noqa: BLE001  (only out-of-memory errors are handled; the rest re-raised)
        if len(pending) <= 1 or not memory.is_out_of_memory(error):
            raise
        width = max(encodings[i].n_tokens for i in pending)
        memory.remember_failure(classifier.memory_shape, classifier.device, "double_backward",
                                len(pending) * rows_per_input(method, config) * width, error)
        half = len(pending) // 2
        for part in (pending[:half], pending[half:]):
            _attack_group(classifier, encodings, part, method, config, progress, should_stop, results, allow_long)
