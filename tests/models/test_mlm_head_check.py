"""Paper 000's head-randomization check with the real quick classifier and the offline masked LM.

Paper 000 Table A5 (SST-2, bert-base-uncased as the masked LM): after re-initializing only the classifier's last
layer (3 seeds), LOOempty changes sign on 71.4 % of the tokens and IM on 62.3 %; the mean absolute change is
0.46 vs 0.31. The cause (§5.3, App. B): IM gives a word the masked LM predicts as itself almost no attribution,
whatever the classifier does.

- ``test_im_barely_moves_on_words_the_masked_lm_predicts``: the mechanism, with the offline stand-in: on the words
  it predicts as themselves (top-1, p >= 0.5), IM's scores change far less than LOO's when the head is randomized.
- ``test_im_changes_sign_on_fewer_words_than_loo``: the Table A5 (a) direction over all words. The offline stand-in
  recovers 22 % of SST-2 words as its top-1 (BERT: 49 %), too few for the effect to show over all words (measured,
  shared machine: IM 54.2 % vs LOO 53.3 % sign changes on 60 SST-2 dev sentences x 3 seeds), so this test runs
  when EXWB_TEST_MLM names a masked LM as predictive as BERT (e.g. bert-base-uncased with the hub) and is skipped
  otherwise, with that reason.

Needs the prepared offline masked LM: built here if missing (like ``quick_classifier``; about 15 min on a loaded
2-core CPU, so CI should run ``python cli.py prepare-mlm`` next to ``prepare --quick``).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from corpora import load_dataset
from evaluation.sanity.one_input import mean_abs_change, sign_change_share
from explainers import create
from explainers.methods.input_marginalization import InputMarginalization
from models.mlm import find_prepared_mlm, inspect_candidates, load_filler, prepare_mlm
from models.randomize import randomize_head

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def offline_mlm():
    if find_prepared_mlm() is None:
        prepare_mlm()
    return load_filler("mlm")


def head_check(classifier, filler, examples) -> dict:
    """Per method: sign-change shares and mean |change| per (sentence, seed), and per-word |change| split by
    whether the masked LM predicts the word as itself (paper 000 App. E, with the same target class)."""
    randomized = [randomize_head(classifier, seed) for seed in SEEDS]
    explainers = {"im": InputMarginalization(preset="paper-000-top10", filler=filler),
                  "loo": create("leave_one_out", preset="paper-000-empty")}
    out = {name: {"sign": [], "change": [], "predictable": [], "other": []} for name in explainers}
    for example in examples:
        encoding = classifier.encode(example.text)
        target = int(np.argmax(classifier.predict_proba([encoding])[0]))
        predictable = np.array([r.predictable(0.5) for r in inspect_candidates(filler, encoding, k=1)])
        for name, explainer in explainers.items():
            original = explainer.explain(classifier, encoding, target).word_scores
            for model in randomized:
                after = explainer.explain(model, encoding, target).word_scores
                out[name]["sign"].append(sign_change_share(original, after))
                out[name]["change"].append(mean_abs_change(original, after))
                out[name]["predictable"] += np.abs(original - after)[predictable].tolist()
                out[name]["other"] += np.abs(original - after)[~predictable].tolist()
    return out


def test_im_barely_moves_on_words_the_masked_lm_predicts(quick_classifier, offline_mlm):
    examples = [e for e in load_dataset("sst2:dev") if len(e.text.split()) <= 25][:12]
    result = head_check(quick_classifier, offline_mlm, examples)
    im, loo = result["im"], result["loo"]
    print(f"sign change: IM {np.mean(im['sign']):.3f} vs LOO {np.mean(loo['sign']):.3f}; mean |change|: IM "
          f"{np.mean(im['change']):.3f} vs LOO {np.mean(loo['change']):.3f}; on {len(im['predictable']) // 3} "
          f"predictable words: IM {np.mean(im['predictable']):.3f} vs LOO {np.mean(loo['predictable']):.3f}")
    assert len(im["sign"]) == len(loo["sign"]) == len(examples) * len(SEEDS)
    assert len(im["predictable"]) >= 3 * len(SEEDS), "the masked LM predicted almost no word as itself"
    # paper 000 §5.3 / App. B: where the masked LM predicts the word, IM hardly reacts to a destroyed head
    assert np.mean(im["predictable"]) < 0.5 * np.mean(loo["predictable"])
    # ... while on the words it does not predict, IM does react
    assert np.mean(im["other"]) > np.mean(im["predictable"])


def test_im_changes_sign_on_fewer_words_than_loo(quick_classifier):
    name = os.environ.get("EXWB_TEST_MLM", "").strip()
    if not name:
        pytest.skip("needs a masked LM as predictive as BERT (set EXWB_TEST_MLM, e.g. bert-base-uncased with "
                    "EXWB_ALLOW_HUB=1): with the offline stand-in (22 % top-1 on SST-2 vs BERT's 49 %) the sign-change "
                    "direction of paper 000 Table A5 is not reproduced (IM 54.2 % vs LOO 53.3 %, 60 sentences)")
    examples = [e for e in load_dataset("sst2:dev") if len(e.text.split()) <= 25][:60]
    result = head_check(quick_classifier, load_filler(name), examples)
    im_sign, loo_sign = np.mean(result["im"]["sign"]), np.mean(result["loo"]["sign"])
    print(f"sign change with {name}: IM {im_sign:.3f} vs LOO {loo_sign:.3f}")
    assert im_sign < loo_sign  # paper 000 Table A5 (a): 62.27 % vs 71.41 %
