"""ROAR presets: a preset named after a paper runs that paper's retraining protocol (whole model, every example);
the quick versions say so in their names and keep each paper's masking protocol."""
from __future__ import annotations

import pytest
from roar_fixtures import write_keyword_csv

from corpora import load_dataset
from evaluation.roar.cost import FORWARD_FACTOR, estimate
from evaluation.roar.data import sample_examples
from evaluation.roar.presets import PRESETS
from evaluation.roar.study import build_config
from evaluation.roar.training import EVERY_EXAMPLE, Variant
from explainers.params import options_from

MASKING = ("measures", "ratios", "seeds", "mode", "operator", "target", "rank_by", "count_rule", "settings")


def variant_of(name: str) -> Variant:
    return options_from(Variant, PRESETS[name])


@pytest.mark.parametrize("paper,batch,warmup", [("paper-000", 32, 0.0), ("paper-001", 16, 0.06),
                                                 ("paper-000-bert", 32, 0.0), ("paper-001-one-token", 16, 0.06)])
def test_paper_presets_fine_tune_the_whole_model_on_every_example(paper, batch, warmup):
    variant = variant_of(paper)
    assert variant.trainable == "all" and variant.init == "base"  # from the pre-trained encoder, every weight
    assert variant.train_size == EVERY_EXAMPLE and variant.test_size == EVERY_EXAMPLE
    assert (variant.epochs, variant.learning_rate, variant.batch_size, variant.warmup) == (3.0, 2e-5, batch, warmup)
    assert "every train / every test" in variant.label()
    quick = variant_of(f"{paper}-quick")
    assert (quick.trainable, quick.train_size, quick.test_size) == ("head", 300, 200)
    assert "quick" in PRESETS[f"{paper}-quick"]["description"] and "hours" in PRESETS[paper]["description"]
    assert {k: PRESETS[paper].get(k) for k in MASKING} == {k: PRESETS[f"{paper}-quick"].get(k) for k in MASKING}


def test_every_preset_named_after_a_paper_runs_its_protocol_and_every_quick_one_says_quick():
    """a preset that carries a paper's name fine-tunes the whole model on every example; a head-only retrain
    on a sample keeps a name that ends in -quick (cpu-small names no paper)."""
    for name in PRESETS:
        variant = variant_of(name)
        full = variant.trainable == "all" and variant.train_size == EVERY_EXAMPLE and variant.test_size == EVERY_EXAMPLE
        if name == "cpu-small":
            assert not full
        elif name.endswith("-quick"):
            assert not full and "quick" in PRESETS[name]["description"], name
        else:
            assert name.startswith("paper-") and full and "hours" in PRESETS[name]["description"], name


def test_the_variant_passes_its_optimizer_settings_to_training():
    config = variant_of("paper-001").train_config(seed=3)
    assert (config.warmup, config.weight_decay, config.lr, config.batch_size) == (0.06, 0.01, 2e-5, 16)
    assert variant_of("paper-000").train_config(seed=0).weight_decay == 0.0
    with pytest.raises(ValueError, match="every example"):
        Variant(train_size=1)


def test_size_zero_takes_every_example(tmp_path):
    dataset = write_keyword_csv(tmp_path / "data.csv", 50, seed=1)
    assert len(sample_examples(dataset, EVERY_EXAMPLE, 0)) == 50
    assert len(sample_examples(dataset, 10, 0)) == 10


@pytest.mark.integration
def test_the_paper_protocol_estimate_counts_every_example_and_the_whole_model(quick_classifier):
    """The cost model (models/metering.py, after one timed batch) on the whole of SST-2: the full fine-tunes cost
    thousands of times the quick head retrains (hours on a CPU: 155 h for the whole paper-000 study here)."""
    preset = PRESETS["paper-000"]
    common = dict(model="default-quick", dataset="sst2", measures=["loo"], ratios=(10,), seeds=(0,),
                  operator="delete", target="predicted", count_rule="ceil", settings="paper")
    paper = estimate(build_config(**common, variant=options_from(Variant, preset)))
    quick = estimate(build_config(**common, variant=variant_of("paper-000-quick")))
    n_train, n_test = len(load_dataset("sst2:train")), len(load_dataset("sst2:dev"))
    assert paper["examples"] == {"train": n_train, "test": n_test} and n_train > 5_000
    # whole-model training: 3 epochs x FORWARD_FACTOR["all"] forward-pass equivalents per example, then the test set
    assert paper["passes_per_retrain"] == pytest.approx(n_train * 3.0 * FORWARD_FACTOR["all"] + n_test)
    assert quick["passes_per_retrain"] == 300 + 200  # encoder features once, the head trains on them
    assert paper["seconds_per_retrain"] > 100 * quick["seconds_per_retrain"]
