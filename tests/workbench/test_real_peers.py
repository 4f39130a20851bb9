"""The importers against the real packages' classes: ferret-xai's ``Explanation`` and inseq's
``FeatureAttributionOutput`` / ``FeatureAttributionSequenceOutput`` / ``TokenWithId``, built as the tools build
them, imported and scored by hand on the same numbers.

Neither package is in the requirements: ferret-xai 0.4.2 pins numpy<2, transformers<5 and captum<0.8 (the project
runs numpy 2, transformers 5, captum 0.9) and imports opencv, shap, lime and seaborn in its ``__init__``; inseq 0.7.1
requires the CUDA 11 wheels (nvidia-*-cu11) and typeguard<=2.13.3. Each test is skipped, with the reason, where its
package is absent. To run them (docs/python.md): ``pip install --no-deps --target /tmp/peer ferret-xai inseq
treescope jaxtyping wadler_lindig typeguard==2.13.3`` and ``PYTHONPATH=/tmp/peer pytest tests/workbench/
test_real_peers.py``.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import workbench as wb
from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.presets import BY_ID

TEXT = "an excellent film , not boring"


def ferret_explanation_class() -> type:
    """ferret's ``Explanation`` dataclass, from the installed package."""
    spec = importlib.util.find_spec("ferret")
    if spec is None or spec.origin is None:  # absent, or only a folder named ferret (bench/ferret): not the package
        pytest.skip("ferret-xai is not installed (its pins conflict with the project's: see this file's docstring)")
    try:
        from ferret.explainers.explanation import Explanation
        return Explanation
    except ImportError:  # ferret/__init__ imports its benchmark's dependencies; the class's own file needs only numpy
        path = Path(spec.submodule_search_locations[0]) / "explainers" / "explanation.py"
        module_spec = importlib.util.spec_from_file_location("ferret_explanation_only", path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
        return module.Explanation


def hand_word_scores(encoding, token_scores) -> np.ndarray:
    return np.array([sum(s for s, w in zip(token_scores, encoding.token_word) if w == word)
                     for word in range(encoding.n_words)])


def by_hand(classifier, encoding, metric: str, word_scores) -> float:
    return evaluate_scores(classifier, encoding, [BY_ID[metric]], word_scores, {"target": "1"}).values[metric]


def test_a_real_ferret_explanation_list_is_imported_and_scored(keyword_classifier):
    Explanation = ferret_explanation_class()
    encoding = keyword_classifier.encode(TEXT)
    # as ferret's explainers build them: tokens = tokenizer.convert_ids_to_tokens(input ids), special tokens
    # included (ferret/model_utils.py, ModelHelper.get_tokens); scores a numpy array, one per token
    tokens = keyword_classifier.tokenizer.convert_ids_to_tokens([int(i) for i in encoding.input_ids])
    scores = np.linspace(-1.0, 2.0, len(tokens))
    explanations = [Explanation(TEXT, tokens, scores, "Partition SHAP", 1),
                    Explanation(TEXT, tokens, -scores, "Integrated Gradient (x Input)", 1)]
    imported = wb.from_ferret(explanations, keyword_classifier)
    assert [e.method_id for e in imported] == ["ferret-partition", "ferret-integrated"]
    expected = hand_word_scores(encoding, scores)
    np.testing.assert_allclose(imported[0].word_scores, expected)
    np.testing.assert_allclose(imported[1].word_scores, -expected)
    metric = "comprehensiveness-ferret"
    table = wb.faithfulness(imported, metrics=[metric], n_random=0)
    assert table.value.tolist() == pytest.approx([by_hand(keyword_classifier, encoding, metric, expected),
                                                  by_hand(keyword_classifier, encoding, metric, -expected)],
                                                 abs=1e-12)


def test_a_real_inseq_output_is_imported_and_scored(keyword_classifier):
    data = pytest.importorskip("inseq.data", reason="inseq is not installed (see this file's docstring)")
    from inseq.utils.typing import TokenWithId

    encoding = keyword_classifier.encode(TEXT)
    n, steps, hidden = len(encoding.tokens), 3, 4
    granular = torch.tensor(np.random.default_rng(0).normal(size=(n, steps, hidden)))  # (source, steps, hidden)
    source = [TokenWithId(token, int(i)) for token, i in zip(encoding.tokens, encoding.input_ids)]
    generated = [TokenWithId(token, i) for i, token in enumerate(["<s>", "good", "</s>"])]
    sequence = data.FeatureAttributionSequenceOutput(source=source, target=generated,
                                                     source_attributions=granular, target_attributions=None)
    output = data.FeatureAttributionOutput(sequence_attributions=[sequence],
                                           info={"input_texts": [TEXT], "attribution_method": "saliency"})
    imported = wb.from_inseq(output, keyword_classifier, target=1)
    assert imported[0].method_id == "inseq-saliency"
    expected = hand_word_scores(encoding, granular.numpy()[:, -1, :].sum(axis=1))  # last step, summed hidden
    np.testing.assert_allclose(imported[0].word_scores, expected)
    metric = "comprehensiveness-eraser"
    table = wb.faithfulness(imported, metrics=[metric], n_random=0)
    assert table.value.iloc[0] == pytest.approx(by_hand(keyword_classifier, encoding, metric, expected), abs=1e-12)
