"""fAML with G on another backbone (paper 004 s. 3.1 on s. 3.3's decoder setting), on tiny models built in code: a
tiny Llama explained with the tiny keyword BERT's G. The first map is pAML's, each step's loss is Eq. 4-7 worked by
hand with the plain models (``cross_backbone_reference.eq_4_to_7``), and one step equals a plain AdamW step on that
hand-worked loss."""
from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import torch
from cross_backbone_reference import eq_4_to_7
from tiny_models import tiny_architecture

from explainers.mask_learning.cross_backbone import CrossBackboneAML
from explainers.mask_learning.cross_finetune import cross_finetune_maps
from models import TextClassifier

TEXT = "the movie was unbelievably excellent!"
LAMBDAS = (2.0, 3.0, 5.0)
LR = 1e-2


@pytest.fixture(scope="module")
def decoder():
    model, tokenizer = tiny_architecture("llama", seed=1)
    return TextClassifier(model, tokenizer, name="tiny-llama", device="cpu", source="tests")


@pytest.fixture()
def aml(decoder, keyword_classifier):
    aml = CrossBackboneAML(decoder, keyword_classifier, dropout=0.0, seed=0)
    aml.model.eval().requires_grad_(False)  # as a loaded checkpoint is
    return aml


def test_the_first_map_is_paml_and_each_loss_is_eq_4_to_7(decoder, aml):
    encoding = decoder.encode(TEXT)
    target = int(decoder.proba_of(encoding).argmax())
    before = {k: v.clone() for k, v in aml.model.state_dict().items()}
    maps, losses = cross_finetune_maps(aml, encoding, target, LAMBDAS, steps=2, lr=LR)
    assert len(maps) == 3 and len(losses) == 2
    np.testing.assert_array_equal(maps[0].numpy(), aml.word_scores(encoding).numpy())
    with torch.no_grad():
        first = sum(float(v) for v in eq_4_to_7(decoder, aml, encoding, target, LAMBDAS).values())
    assert losses[0] == pytest.approx(first, rel=1e-4)
    assert all(torch.equal(before[k], v) for k, v in aml.model.state_dict().items())  # G itself is left as it was
    assert np.abs(maps[-1].numpy() - maps[0].numpy()).max() > 1e-4  # the steps do move the map
    assert all(((m >= 0) & (m <= 1)).all() for m in maps)


def test_one_step_equals_adamw_on_the_hand_worked_loss(decoder, aml):
    encoding = decoder.encode(TEXT)
    target = int(decoder.proba_of(encoding).argmax())
    maps, _ = cross_finetune_maps(aml, encoding, target, LAMBDAS, steps=1, lr=LR)
    # the reference: a deep copy of G, the frozen tensors as the reference code keeps them (embeddings, z_0, the
    # class embeddings), the rest trained by torch's per-tensor AdamW on Eq. 4-7 worked by hand
    reference = copy.copy(aml)
    reference.model = copy.deepcopy(aml.model)
    fixed = {id(p) for p in reference.model.fixed_in_finetuning()}
    trainable = [p for p in reference.model.parameters() if id(p) not in fixed]
    for parameter in trainable:
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(trainable, lr=LR, foreach=False)
    loss = functools.reduce(torch.add, eq_4_to_7(decoder, reference, encoding, target, LAMBDAS).values())
    loss.backward()
    optimizer.step()
    np.testing.assert_allclose(maps[1].numpy(), reference.word_scores(encoding).numpy(), rtol=0, atol=1e-5)
