"""The ROAR study presets: each paper's protocol, and quick versions of it that finish in minutes on a CPU."""
from __future__ import annotations

from evaluation.roar.config import FULL_RATIOS
from models import runtime

# A preset named after a paper runs that paper's protocol: the whole model fine-tuned from the pre-trained encoder
# on every training example, tested on the whole dev split (paper 000 s. 3.2-3.3: BERT-base, 3 epochs, Adam lr 2e-5,
# batch 32, length 128, HuggingFace's defaults otherwise; paper 001 App. C.2, Table 5: RoBERTa-base, 3 epochs, AdamW
# lr 2e-5, warm-up 0.06, weight decay 0.01, batch 16, length 512). On a CPU that is hours (the estimate says how
# many): run it as a background job, on Ray or on a GPU. The ``-quick`` presets keep each paper's masking protocol
# but retrain only a new head on the frozen encoder with 300 / 200 sentences, so they finish in minutes.
_QUICK = {"trainable": "head", "train_size": 300, "test_size": 200}
_PAPER_000_TRAINING = {"trainable": "all", "init": "base", "train_size": 0, "test_size": 0, "epochs": 3.0,
                       "lr": 2e-5, "batch_size": 32, "max_length": 128, "warmup": 0.0, "weight_decay": 0.0}
_PAPER_001_TRAINING = {"trainable": "all", "init": "base", "train_size": 0, "test_size": 0, "epochs": 3.0,
                       "lr": 2e-5, "batch_size": 16, "max_length": 512, "warmup": 0.06, "weight_decay": 0.01}
# paper 000 Table 2 compares LOOempty with IM (IM-top10), ROAR and ROARBERT; LIME against LIME-BERT is its Table A6
# (the ``paper-000-table-a6`` presets). IM and LIME-BERT fill words with the masked LM (the prepared stand-in; the
# paper's bert-base-uncased with ``--measures loo,im:paper-000-bert``).
PAPER_000_TABLE_2 = ("loo", "im")
PAPER_000_TABLE_A6 = ("lime", "lime-bert")
_PAPER_000_MASKING = {"measures": PAPER_000_TABLE_2, "ratios": (10, 20, 30), "seeds": (0, 1, 2, 3, 4), "mode": "roar",
                      "operator": "delete", "target": "predicted", "rank_by": "signed", "count_rule": "ceil",
                      "settings": "paper"}
# Paper 001 Table 2's RoBERTa column: gradient, x * gradient, IG. Its attention measure is the BiLSTM's attention
# (section 4), declined for RoBERTa ("—" in Table 2), so transformer [CLS] attention is not in the paper-001 presets;
# ``--measures gradient,ixg,ig,attention`` adds it as this project's addition.
PAPER_001_TABLE_2 = ("gradient", "ixg", "ig")
_PAPER_001_MASKING = {"measures": PAPER_001_TABLE_2, "ratios": FULL_RATIOS,
                      "seeds": (0, 1, 2, 3, 4), "mode": "both", "operator": "mask", "target": "gold",
                      "count_rule": "floor", "settings": "paper"}
# Paper 001 App. F (Fig. 7): the exact Recursive ROAR masks one token per step, up to 10 tokens ("count" strategy);
# the 0 % / 100 % anchors are not on that axis, so there is no Eq. 3 score (it needs the 100 % floor): the curves and
# the Welch tests compare the measures (evaluation/roar/scores.py).
_ONE_TOKEN = {"ratios": tuple(range(1, 11)), "count_rule": "tokens", "mode": "recursive", "anchors": False}
PRESETS = {
    "cpu-small": {"description": "the small CPU study: ROAR at 10/20/30 %, 1 seed, frozen encoder + head, "
                                 "300 training / 200 test sentences, cheap measure settings",
                  "measures": ("ig", "lime", "loo", "attention"), "ratios": (10, 20, 30), "seeds": (0,),
                  "mode": "roar", "operator": "mask", "target": "predicted", **_QUICK},
    "paper-000-quick": {"description": "quick version of paper 000 Table 2: its measures (LOOempty vs IM-top10, "
                                       "IM with the masked LM) and masking (ROAR at 10/20/30 %, words "
                                       "deleted, predicted label, signed ranking, ceil count, 5 seeds) but a new "
                                       "head on the frozen encoder, 300 training / 200 test sentences",
                        **_PAPER_000_MASKING, **_QUICK},
    "paper-000": {"description": "paper 000 Table 2 protocol: LOOempty vs IM-top10 (IM with the masked LM), "
                                 "ROAR at 10/20/30 %, words deleted, predicted label, "
                                 "signed ranking, ceil count, 5 seeds; the whole model fine-tuned from the pre-trained "
                                 "encoder on every training sentence (3 epochs, lr 2e-5, batch 32), every dev "
                                 "sentence tested: hours on a CPU",
                  **_PAPER_000_MASKING, **_PAPER_000_TRAINING},
    "paper-000-bert": {"description": "paper 000 Table 2 ROARBERT protocol: as paper-000 (LOOempty vs IM-top10) but "
                                      "removed words replaced by the "
                                      "masked LM's top-1 word (needs the MLM filler); the whole model fine-tuned on "
                                      "every training sentence: hours on a CPU",
                       **_PAPER_000_MASKING, "operator": "mlm", **_PAPER_000_TRAINING},
    "paper-000-table-a6": {"description": "paper 000 Table A6 protocol: LIME vs LIME-BERT (1,000 samples, the masked "
                                          "LM fills LIME-BERT's removed words) under ROAR with paper-000's masking "
                                          "(--operator mlm: its ROARBERT columns); the whole model fine-tuned on "
                                          "every training sentence: hours on a CPU",
                           **_PAPER_000_MASKING, "measures": PAPER_000_TABLE_A6, **_PAPER_000_TRAINING},
    "paper-000-table-a6-quick": {"description": "quick version of paper 000 Table A6: LIME vs LIME-BERT with "
                                                "paper-000's masking but a new head on the frozen encoder, 300 / 200 "
                                                "sentences",
                                 **_PAPER_000_MASKING, "measures": PAPER_000_TABLE_A6, **_QUICK},
    "paper-000-bert-quick": {"description": "quick version of paper 000 Table 2 ROARBERT: as paper-000-quick (LOOempty "
                                            "vs IM-top10) but removed words "
                                            "replaced by the masked LM's top-1 word (needs the MLM filler)",
                             **_PAPER_000_MASKING, "operator": "mlm", **_QUICK},
    "paper-001-quick": {"description": "quick version of paper 001: its masking (ROAR and Recursive ROAR, [MASK] at "
                                       "10-90 % + 0/100 % anchors, gold label, floor count, 5 seeds, gradient / x * "
                                       "gradient / IG as Table 2's RoBERTa column) but a new head on the frozen "
                                       "encoder, 300 / 200 sentences",
                        **_PAPER_001_MASKING, **_QUICK},
    "paper-001": {"description": "paper 001 protocol: gradient, x * gradient and IG (Table 2's RoBERTa column: "
                                 "the paper has no attention measure for a transformer; add one with --measures "
                                 "gradient,ixg,ig,attention as this project's addition), ROAR and Recursive ROAR, "
                                 "[MASK] at 10-90 % (+ 0/100 % anchors), gold label, floor count, 5 seeds; the "
                                 "whole model fine-tuned from the "
                                 "pre-trained encoder on every training example (3 epochs, AdamW lr 2e-5, warm-up "
                                 "0.06, batch 16), every test example: hours on a CPU",
                  **_PAPER_001_MASKING, **_PAPER_001_TRAINING},
    "paper-001-one-token": {"description": "paper 001 App. F protocol: Recursive ROAR removing exactly one word "
                                           "per step (1..10 words, importance recomputed by the previous step's "
                                           "model), [MASK], gold label, 5 seeds; the whole model fine-tuned as "
                                           "paper-001 at every step: hours on a CPU",
                            **_PAPER_001_MASKING, **_ONE_TOKEN, **_PAPER_001_TRAINING},
    "paper-001-one-token-quick": {"description": "quick version of paper 001 App. F: its one-word steps and masking "
                                                 "but a new head on the frozen encoder, 300 / 200 sentences",
                                  **_PAPER_001_MASKING, **_ONE_TOKEN, **_QUICK},
}


def default_seeds() -> tuple[int, ...]:
    """3 seeds on a CPU, 5 on a GPU (the issue's defaults)."""

    return (0, 1, 2, 3, 4) if runtime.choose_device().type == "cuda" else (0, 1, 2)
