"""AML (paper 004, Barkan et al.): an attribution model G trained once to predict faithful masks (pAML), optionally
fine-tuned for a few steps on the input itself (fAML), selected on the metric of interest.

- pAML (s. 3.1-3.2): one forward pass of the G built by ``cli.py prepare-aml`` (``explainers/mask_learning/aml_training.py``)
  for this exact model, plus one of the classifier for y_v; the checkpoint was the best on one validation
  metric, named in every explanation ("tuned for ...").
- fAML (s. 3.1): from that G, ``finetune_steps`` AdamW steps on the loss of Eq. 4-7 for this input alone (G in
  eval mode, z_0 and the class embeddings frozen, as coded), keeping the map that scores best on the same
  metric. The reference code builds its per-input schedule with zero total steps, which leaves the learning
  rate at 0 (the map never changes); here the rate is constant.
- ``generator``: G on another encoder (s. 3.3's decoder setting, ``mask_learning/cross_backbone.py``); pAML and
  fAML alike (``mask_learning/cross_finetune.py``), its scores reaching the model's tokens through the words.

The attribution model and its loss: ``explainers/mask_learning/aml_model.py``. Token scores are in [0, 1]
(G's sigmoid; special tokens get scores too) and a word gets its largest sub-word score (the paper's rule for
merging tokens, footnote 6). A score computed on the metric it was selected on is optimistic by construction.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.aggregate import aggregate_to_words
from explainers.base import Attribution, Explainer
from explainers.mask_learning.aml_model import MASK_TOKENS, PREDICTION_TARGETS, conditioning, mask_token_id
from explainers.mask_learning.aml_store import load_attribution_model, resolve_checkpoint
from explainers.mask_learning.cross_backbone import load_cross, resolve_cross_checkpoint
from explainers.mask_learning.cross_finetune import cross_finetune_maps
from explainers.mask_learning.finetune import finetune_maps
from explainers.mask_learning.selection import (
    DEFAULT_METRIC,
    METRICS,
    best_index,
    copies_per_candidate,
    metric_named,
    metric_values,
)
from explainers.params import param
from explainers.registry import register
from models import InputError, ModelError


@register
class AML(Explainer):
    id = "aml"
    contrast_support = "unsupported"  # G is trained for one class at a time
    label = "AML (attributive masking learning)"
    family = "mask_learning"  # optimized or learned masks: no ensemble member by default (tens of seconds)
    description = "A trained attribution model predicts which words carry the prediction in one pass (pAML), " \
                  "optionally fine-tuned on this input for a few steps (fAML); selected on one faithfulness metric."
    reference = "Barkan et al., paper 004 s. 3.1-3.3 (Eq. 1-7)"
    needs_gradients = True  # fAML backpropagates through the classifier
    trains = True  # needs an attribution model trained for this model (cli.py prepare-aml)
    word_aggregation = "max"

    @dataclass(frozen=True)
    class Params:
        tuned_for: str = param(DEFAULT_METRIC, "Selected on", "The metric the attribution model (and fAML's map) was "
                               "selected on; its scores on this metric are optimistic.", choices=tuple(METRICS))
        finetune_steps: int = param(0, "fAML steps", "0 = pAML (one forward pass); fAML: steps on this input "
                                    "(reference code: 5).", min=0, max=200)
        finetune_lr: float = param(4e-5, "fAML learning rate", "Constant rate of the per-input steps (the "
                                   "reference code's pretraining rate, 4e-5).", min=0.0, max=1.0)
        lambda_p: float = param(-1.0, "lambda_p", "Weight of L_p in fAML's loss (-1 = the checkpoint's).",
                                min=-1.0, max=1000.0)
        lambda_a: float = param(-1.0, "lambda_a", "Weight of L_a (-1 = the checkpoint's).", min=-1.0, max=1000.0)
        lambda_inv: float = param(-1.0, "lambda_inv", "Weight of L_inv (-1 = the checkpoint's).", min=-1.0,
                                  max=1000.0)
        prediction_target: str = param("soft", "y_v", "soft: F's probabilities (paper Eq. 5); argmax: one-hot "
                                       "(reference code). Explaining another class than the predicted one always "
                                       "conditions on that class.", choices=PREDICTION_TARGETS)
        mask_token: str = param("mask", "Mask token", "The embedding masked words move toward ([MASK] in the paper; "
                                "[UNK] where a tokenizer has no [MASK]).", choices=MASK_TOKENS)
        checkpoint: str = param("", "Checkpoint folder", "Empty: the one prepared for this model and metric.",
                                server_path=True)
        source_fingerprint: str = param("", "Trained for (fingerprint)", "Use the attribution model trained for this "
                                        "model fingerprint (e.g. the original of a randomized copy); the explanation "
                                        "says so.")
        generator: str = param("", "Attribution model backbone", "Empty: G on the explained model's own backbone "
                               "(paper 004's encoder setting). A model (built-in name or folder), e.g. 'default': G "
                               "on that encoder, its scores aligned to this model's tokens by words (paper 004 s. "
                               "3.3's decoder setting; build it with `cli.py prepare-aml --generator`).",
                               server_path=True)

    presets = {
        "pAML": {"finetune_steps": 0},
        "fAML": {"finetune_steps": 5, "finetune_lr": 4e-5},
        # paper 004 s. 3.3's decoder setting (a RoBERTa G for Llama-2 / Mistral) with this project's default encoder
        "pAML-encoder-G": {"finetune_steps": 0, "generator": "default"},
        "fAML-encoder-G": {"finetune_steps": 5, "finetune_lr": 4e-5, "generator": "default"},
    }

    def lambdas(self, manifest: dict) -> tuple[float, float, float]:
        """fAML's loss weights: the parameters where given (>= 0), else those the checkpoint was trained with."""
        trained = manifest.get("lambdas", {})
        chosen = [getattr(self.params, name) for name in ("lambda_p", "lambda_a", "lambda_inv")]
        p, a, inv = (float(v) if v >= 0 else float(trained.get(name, 1.0))
                     for v, name in zip(chosen, ("lambda_p", "lambda_a", "lambda_inv")))
        return p, a, inv

    def checkpoint_for(self, classifier) -> tuple:
        """(folder, manifest, warnings) of the attribution model that explains ``classifier``; ``AMLNotPrepared``
        when none was built yet (a page offers to build it, explainers/plan.py), ``ModelError`` for a checkpoint
        of another model."""
        p = self.params
        if p.generator:  # G on another backbone: its own checkpoint, beside the own-backbone one
            return resolve_cross_checkpoint(classifier, metric_named(p.tuned_for), p.generator, p.source_fingerprint)
        return resolve_checkpoint(classifier, metric_named(p.tuned_for), p.checkpoint, p.source_fingerprint)

    def cache_salt(self, classifier) -> dict:
        """The checkpoint's weights: after a rebuild, explanations of the old attribution model are not served."""
        try:
            _folder, manifest, _warnings = self.checkpoint_for(classifier)
        except ModelError:  # none built yet (or another model's): nothing cached can match either
            return {}
        return {"checkpoint": manifest.get("weights_sha256") or manifest.get("created", "")}

    def is_signed(self) -> bool:
        return False

    def sign_convention(self) -> str:
        return "mask value in [0, 1] predicted by the attribution model: 1 = needed for the target class"

    def estimate_passes(self, encoding):
        """The classifier's passes (G's are not metered): y_v's forward, x' and x'' each fAML step, and at most
        one perturbed copy per candidate map and metric bin (maps that rank the same words share theirs)."""
        steps = self.params.finetune_steps
        selection = (steps + 1) * copies_per_candidate(metric_named(self.params.tuned_for), encoding.n_words) \
            if steps else 0
        return 1 + 2 * steps + selection, 2 * steps

    def attribute(self, classifier, encoding, target):
        p = self.params
        metric = metric_named(p.tuned_for)
        if encoding.n_words == 0:
            raise InputError("The input has no words the model can read, so there is nothing to attribute.")
        if encoding.truncated_tokens:  # G appends the prediction encoding as one more position
            raise InputError(f"This text is longer than the {classifier.max_length} tokens the model reads, and AML's "
                             f"attribution model needs one position more: shorten it (MaRC explains long texts "
                             f"in overlapping segments).")
        if encoding.n_tokens >= classifier.max_length:
            raise InputError(f"AML's attribution model reads the input plus one position for the prediction, and this "
                             f"input fills all {classifier.max_length} positions the model has: shorten it by a word "
                             f"or two.")
        folder, manifest, warnings = self.checkpoint_for(classifier)
        if manifest.get("generator"):
            return self._attribute_cross(classifier, encoding, target, folder, manifest, warnings)
        model = load_attribution_model(classifier, folder)
        mask_id, note = mask_token_id(classifier, p.mask_token)
        warnings += [note] if note else []
        tensors = classifier.tensors(encoding)
        ids, attention, types = tensors["input_ids"], tensors["attention_mask"], tensors.get("token_type_ids")
        probabilities = torch.as_tensor(classifier.proba_of(encoding)[None], dtype=torch.float32,
                                        device=classifier.device)
        label = torch.tensor([target], device=classifier.device)
        predicted = int(probabilities.argmax())
        y = conditioning(probabilities, label, p.prediction_target if target == predicted else "argmax")
        steps_note = {}
        if p.finetune_steps:
            lambdas = self.lambdas(manifest)
            maps, losses = finetune_maps(classifier, model, ids, attention, types, y, label, mask_id, lambdas,
                                         p.finetune_steps, p.finetune_lr)
            change = [round(float((m - maps[0]).abs().max()), 8) for m in maps[1:]]
            steps_note = {"finetune_losses": [round(loss, 6) for loss in losses], "finetune_lambdas": list(lambdas),
                          "finetune_map_change": change}  # largest |a_t - a_pAML| after each step
        else:
            with torch.no_grad():
                maps = [torch.sigmoid(model(ids, attention, y, types))[0]]
        token_maps = [m.detach().cpu().double().numpy() for m in maps]
        chosen = 0
        values = None
        if len(token_maps) > 1:
            words = [aggregate_to_words(m, encoding.token_word, encoding.n_words, self.word_aggregation)
                     for m in token_maps]
            values = metric_values(classifier, encoding, words, metric, target)
            chosen = best_index(values, metric)
        selected_on = manifest.get("tuned_for", {}).get("label", metric.label)
        details = {
            "tuned_for": metric.id, "badge": f"tuned for {metric.label}", "checkpoint": str(folder),
            "checkpoint_selected_on": selected_on, "checkpoint_validation_score": manifest.get("validation_score"),
            "trained_for_fingerprint": manifest.get("explained_model", {}).get("fingerprint"),
            "lambdas": manifest.get("lambdas"), "mode": "fAML" if p.finetune_steps else "pAML",
            "selected_step": chosen, **steps_note,
        }
        if values is not None:
            details["selection_values"] = [round(float(v), 6) for v in values]
        if target != predicted:
            warnings.append("AML was trained on the model's predicted classes; this explains another class "
                            "(conditioned on it as a one-hot y_v).")
        return Attribution(token_scores=np.asarray(token_maps[chosen]), details=details, warnings=warnings,
                           baseline=f"soft masking toward the {classifier.tokenizer.convert_ids_to_tokens(mask_id)} "
                                    f"embedding")

    def _attribute_cross(self, classifier, encoding, target, folder, manifest, warnings) -> Attribution:
        """pAML or fAML with G on another backbone (``mask_learning/cross_backbone.py``, ``cross_finetune.py``):
        word scores, max over G's tokens of a word; fAML keeps the step's map best on the selection metric."""
        p = self.params
        aml = load_cross(classifier, folder, manifest)
        steps_note: dict = {}
        if p.finetune_steps:
            lambdas = self.lambdas(manifest)
            maps, losses = cross_finetune_maps(aml, encoding, target, lambdas, p.finetune_steps, p.finetune_lr,
                                               p.prediction_target)
            candidates = [m.detach().cpu().double().numpy() for m in maps]
            metric = metric_named(p.tuned_for)
            values = metric_values(classifier, encoding, candidates, metric, target)
            chosen = best_index(values, metric)
            steps_note = {"finetune_losses": [round(loss, 6) for loss in losses], "finetune_lambdas": list(lambdas),
                          "finetune_map_change": [round(float(np.abs(c - candidates[0]).max()), 8)
                                                  for c in candidates[1:]],
                          "selected_step": chosen, "selection_values": [round(float(v), 6) for v in values]}
            scores = candidates[chosen]
        else:
            scores = aml.word_scores(encoding, target, p.prediction_target).cpu().double().numpy()
        generator = manifest["generator"]
        details = {"tuned_for": manifest["tuned_for"]["id"], "badge": f"tuned for {manifest['tuned_for']['label']}",
                   "checkpoint": str(folder), "checkpoint_validation_score": manifest.get("validation_score"),
                   "lambdas": manifest.get("lambdas"), "mode": "fAML" if p.finetune_steps else "pAML",
                   "generator": {"spec": generator["spec"], "fingerprint": generator["fingerprint"]},
                   "alignment": "by words: max over G's tokens of a word, replicated to the model's tokens "
                                "(paper 004 s. 3.3)", **steps_note}
        if aml.mask_note:
            warnings = [*warnings, aml.mask_note]
        mask = classifier.tokenizer.convert_ids_to_tokens(aml.mask_id)
        return Attribution(word_scores=scores, details=details, warnings=warnings,
                           baseline=f"soft masking toward the {mask} embedding; G on '{generator['spec']}'")
