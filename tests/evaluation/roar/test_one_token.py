"""Paper 001 App. F, the exact Recursive ROAR: one more word per step, importance recomputed by the model retrained
at the previous step (the 'tokens' count rule, preset paper-001-one-token, ``cli.py roar --step-tokens``)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv

from evaluation.roar.config import StudyConfig
from evaluation.roar.data import study_data
from evaluation.roar.masking import count_at, masked_encoding, scores_on_original, select_removed
from evaluation.roar.measures import importance_scores, resolve_measure
from evaluation.roar.presets import PRESETS
from evaluation.roar.steps import recursive_masks, trained
from evaluation.roar.study import build_config
from models import UserFacingError


@pytest.fixture(scope="module")
def env(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("roar-one-token")
    folder = save_keyword_model(keyword_classifier, root / "model")
    data = root / "data"
    data.mkdir()
    write_keyword_csv(data / "train.csv", 60, seed=1)
    write_keyword_csv(data / "test.csv", 20, seed=2)
    from explainers.cache import DEFAULT_CACHE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(root / "cache"))
        patch.setattr(DEFAULT_CACHE, "directory", root / "cache" / "explanations")
        config = build_config(**tiny_study_kwargs(folder, data, measures=["loo"], ratios=[1, 2, 3], seeds=[0],
                                                  mode="recursive", count_rule="tokens", anchors=False))
        yield SimpleNamespace(config=config, data=study_data(config), measure=resolve_measure("loo", "cheap"))


def test_the_tokens_rule_counts_words_not_percent():
    assert [count_at(7, k, "tokens") for k in (1, 2, 3, 10)] == [1, 2, 3, 7]
    assert count_at(10, 30, "floor") == 3
    with pytest.raises(UserFacingError, match="numbers of words"):
        StudyConfig(ratios=(1.5, 2), count_rule="tokens")
    preset = PRESETS["paper-001-one-token-quick"]
    assert PRESETS["paper-001-one-token"]["ratios"] == preset["ratios"]  # the paper protocol masks the same way
    assert preset["ratios"] == tuple(range(1, 11)) and preset["count_rule"] == "tokens"


def test_step_i_removes_exactly_i_words_chosen_by_the_model_of_step_i_minus_1(env):
    config, data, measure = env.config, env.data, env.measure
    previous = None
    for step in (1, 2, 3):
        masks, info = recursive_masks(config, data, measure, step, seed=0)
        for split in ("train", "test"):
            for i, mask in enumerate(masks[split]):
                eligible = data.eligible[split][i]
                assert mask.sum() == min(step, eligible.sum())
                if previous is not None:
                    assert np.all(mask[previous[split][i]])  # removed words stay removed
        if step == 1:
            assert info["importance_model"] == "explained model"
        else:
            assert info["importance_model"] == f"model retrained at step {step - 1}"
            # recompute step i's choice here: importance by the model retrained on step i-1's masks, on that data
            model, _, key = trained(config, data, previous, seed=0, need_weights=True)
            retrained = data.classifier.with_model(model, fingerprint=f"check-{key}")
            for i in range(3):
                encoding, before = data.encodings["test"][i], previous["test"][i]
                masked, word_map = masked_encoding(data.classifier, encoding, before, config.operator)
                values = importance_scores(measure, retrained, [masked], [data.ids["test"][i]],
                                           [None], 0, cache=None)[0]
                expected = select_removed(scores_on_original(values, word_map, encoding.n_words),
                                          data.eligible["test"][i], before, min(step, encoding.n_words),
                                          config.rank_by)
                assert np.array_equal(masks["test"][i], expected)
        previous = masks
