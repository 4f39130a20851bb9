"""Dataset-level model comparison: model metadata from the saved configuration, the (model, check)
cells reusing the report card's studies (values recomputed another way), adding a model runs only its cells, the
randomization curve ends at the card's value, and a model without a known-feature twin is not applicable."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace

import numpy as np
import pytest
from report_card_fixtures import write_rationale_csv
from tiny_models import keyword_sentences, save_tiny_architecture, tiny_bert, tiny_tokenizer, train_on

from corpora import load_dataset
from evaluation.faithfulness.known_feature import ground_truth_metrics
from evaluation.runs import ray_executor
from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite import model_comparison_dataset as mcd
from explainers import create_from_spec
from models import ModelError, load_classifier
from models.prepare import base_version

METHODS = ["saliency", "leave_one_out", "attention"]
CHECKS = ("known_feature", "sanity", "plausibility")


def _keyword_model(folder, layers: int) -> str:
    model, tokenizer = tiny_bert(layers=layers), tiny_tokenizer()
    texts, labels = keyword_sentences(200, seed=layers)
    train_on(model, tokenizer, texts, labels, steps=40, seed=layers)
    model.config.id2label, model.config.label2id = {0: "negative", 1: "positive"}, {"negative": 0, "positive": 1}
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    root = tmp_path_factory.mktemp("zoo")
    return {"one": _keyword_model(root / "one", 1), "two": _keyword_model(root / "two", 2),
            "causal": save_tiny_architecture("causal-bert", root / "causal")}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_rationale_csv(tmp_path_factory.mktemp("data") / "keyword.csv", 5, seed=4)


@pytest.fixture(scope="module")
def config(data):
    return mcd.ComparisonConfig.quick(checks=CHECKS, known_feature_dataset=data, random_orderings=3)


@pytest.fixture(scope="module")
def first_and_extended(zoo, data, config, tmp_path_factory):
    """A comparison of one model, then the same comparison with a second model added."""
    store = ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite")
    twins = {zoo["one"]: zoo["one"], zoo["two"]: zoo["two"]}
    first = mcd.run_comparison([zoo["one"]], data, METHODS, config, twins, store)
    store, run_id, cells = mcd.start_comparison([zoo["one"], zoo["two"]], data, METHODS, config, twins, store)
    seen = []
    run_cells(store, run_id, cells, mcd.comparison_cell, progress=lambda done, total, eta: seen.append(done))
    return first, mcd.results(store, run_id, cells), seen, store


def test_size_and_architecture_come_from_the_model(zoo):
    one, two, causal = (mcd.model_info(zoo[name]) for name in ("one", "two", "causal"))
    assert (one["blocks"], two["blocks"], causal["blocks"]) == (1, 2, 2)
    assert (one["architecture"], two["architecture"], causal["architecture"]) == (mcd.ENCODER, mcd.ENCODER,
                                                                                 mcd.CAUSAL)
    block = load_classifier(zoo["two"]).model.bert.encoder.layer[1]
    assert two["parameters"] - one["parameters"] == sum(p.numel() for p in block.parameters())


def test_adding_a_model_runs_only_that_models_cells(first_and_extended):
    first, extended, seen, _ = first_and_extended
    assert seen[0] == len(CHECKS)  # the first model's cells were finished before the second run started
    assert seen[-1] == 2 * len(CHECKS)
    assert not extended.errors and not extended.pending
    assert [m["blocks"] for m in extended.models] == [1, 2]
    old = first.rows.sort_values(["check", "metric", "method"]).reset_index(drop=True)
    same = extended.rows[extended.rows["model"] == old["model"][0]].sort_values(["check", "metric", "method"])
    np.testing.assert_array_equal(old["mean"].to_numpy(), same["mean"].to_numpy())


def test_a_reopened_comparison_says_it_computed_nothing(first_and_extended, zoo, data, config):
    first, _, _, store = first_and_extended
    assert sum(first.computed.values()) > 0
    twins = {zoo["one"]: zoo["one"], zoo["two"]: zoo["two"]}
    again = mcd.run_comparison([zoo["one"], zoo["two"]], data, METHODS, config, twins, store)
    assert len(again.computed) == 2 * len(CHECKS) and set(again.computed.values()) == {0}


def test_known_feature_overlap_is_recomputed_from_the_explanations(first_and_extended, zoo, data):
    _, extended, _, _ = first_and_extended
    classifier = load_classifier(zoo["two"])
    values, fractions = [], []
    for example in load_dataset(data, limit=4):
        encoding = classifier.encode(example.text)
        explanation = create_from_spec("leave_one_out").explain(classifier, encoding, None)
        found = ground_truth_metrics(explanation.word_scores, example.rationale)
        if found:  # a sentence without the keyword has no known feature and no value
            values.append(found["known-feature.precision@k"])
            fractions.append(found["known-feature.rank-fraction"])
    rows = extended.rows
    found = rows[(rows["model"] == zoo["two"]) & (rows["method"] == "leave_one_out")
                 & (rows["metric"] == "known-feature.precision@k")]
    assert len(values) == found["n"].item() == 2
    assert found["mean"].item() == pytest.approx(np.mean(values), abs=1e-12)  # a mean of 0/1 values
    # the card's rule reads the rank %: its rows are labelled with it, never with the overlap's name
    rank = rows[(rows["model"] == zoo["two"]) & (rows["method"] == "leave_one_out")
                & (rows["metric"] == "known-feature.rank-fraction")]
    assert rank["mean"].item() == pytest.approx(np.mean(fractions), abs=1e-12)
    assert set(rows["metric"]) >= {"known-feature.rank-fraction", "sanity_spearman", "plaus_auprc"}


def test_the_randomization_curve_ends_at_the_cards_value(first_and_extended, zoo):
    _, extended, _, _ = first_and_extended
    curves = extended.curves[extended.curves["model"] == zoo["two"]]
    stages = curves[curves["method"] == "saliency"].sort_values("stage_index")
    assert len(stages) == 2 + 2 + 1  # original, head, two blocks, embeddings
    assert stages["mean"].iloc[0] == pytest.approx(1.0)  # the original explanation against itself
    card = extended.rows[(extended.rows["model"] == zoo["two"]) & (extended.rows["check"] == "sanity")
                         & (extended.rows["method"] == "saliency")]
    assert stages["mean"].iloc[-1] == pytest.approx(card["mean"].item(), rel=1e-6)
    assert curves["chance_high"].notna().all()


def test_a_model_without_a_known_feature_twin_is_not_applicable(zoo, data, tmp_path):
    config = mcd.ComparisonConfig.quick(checks=("known_feature",))
    found = mcd.run_comparison([zoo["causal"]], data, ["saliency"], config, store=ResultStore(tmp_path / "r.sqlite"))
    assert found.rows["not_applicable"].str.contains("known-feature twin").all()


def test_built_in_models_have_known_feature_twins_of_their_shape():
    from evaluation.faithfulness import known_feature

    recipe = known_feature.RECIPE
    assert known_feature.recipe_for("default") == recipe  # the project's known-feature model
    # the zoo fields at their defaults leave the key (and so the cached model) as it was before they existed
    before = {k: v for k, v in asdict(recipe).items() if k not in ("blocks", "causal")}
    payload = json.dumps({**before, "base": base_version()}, sort_keys=True, default=str)
    assert recipe.key == hashlib.sha256(payload.encode()).hexdigest()[:10]
    assert known_feature.model_dir().name == f"known-feature-{recipe.key}"
    assert (known_feature.recipe_for("minilm-l2").blocks, known_feature.recipe_for("minilm-causal").causal) == (2, True)
    assert known_feature.recipe_for("./a-folder") is None


def test_bad_choices_fail_before_any_work(zoo, data, tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    with pytest.raises(ModelError, match="Unknown check"):
        mcd.start_comparison([zoo["one"]], data, METHODS, mcd.ComparisonConfig(checks=("nope",)), store=store)
    with pytest.raises(ModelError, match="at least one model"):
        mcd.start_comparison([" "], data, METHODS, store=store)
    assert store.list_runs() == []


def test_the_sanity_cell_runs_the_full_cascade_only(first_and_extended):
    """The card's row is read from the full study's last stage, so no last-stage-only study runs beside it."""
    store = first_and_extended[3]
    studies = store.list_runs("sanity")
    assert len(studies) == 2  # one full cascade per model
    assert all("only_stages" not in run["config"] for run in studies)


def test_the_attack_check_gives_its_three_measures_as_a_direct_attack_does(zoo, tmp_path):
    """Rank Change, Top-k Sum Change and Probability Change per method, as the attack gives them on each example
    (only the chosen attacked methods run; the others are not applicable, with the reason)."""
    from tiny_models import FILLER

    from evaluation.adversarial.attack import attack
    from evaluation.adversarial.config import config_for

    words = list(FILLER)
    path = tmp_path / "long.csv"
    path.write_text("text,label\n" + "".join(f"{' '.join(words[i:i + 10])},{i % 2}\n" for i in (0, 5)))
    config = mcd.ComparisonConfig.quick(checks=("adversarial",), attack_methods=("saliency",))
    found = mcd.run_comparison([zoo["one"]], f"file:{path}", ["saliency", "input_x_gradient", "attention"], config,
                               store=ResultStore(tmp_path / "r.sqlite"))
    assert not found.errors
    rows = found.rows.set_index(["method", "metric"])
    assert rows.loc[("attention", "rank_change"), "not_applicable"].startswith("the attack needs a differentiable")
    assert rows.loc[("input_x_gradient", "rank_change"), "not_applicable"].startswith("not attacked in this run")
    assert set(found.rows.loc[found.rows["mean"].notna(), "method"]) == {"saliency"}
    classifier = load_classifier(zoo["one"])
    settings = config_for(None, steps=config.attack_steps, seed=config.seed, loop_ig_steps=config.attack_loop_ig_steps)
    direct = [attack(classifier, classifier.encode(example.text), "saliency", settings).measures()
              for example in load_dataset(f"file:{path}", limit=2)]
    for metric in mcd.METRICS["adversarial"]:
        assert rows.loc[("saliency", metric), "n"] == 2
        # the same attack in the same process: equal up to float32 rounding of probabilities (values <= 1)
        assert rows.loc[("saliency", metric), "mean"] == pytest.approx(np.mean([d[metric] for d in direct]), abs=1e-6)


@pytest.mark.slow
@pytest.mark.ray
def test_the_comparison_runs_its_cells_on_ray_with_the_local_numbers(zoo, data, config, tmp_path):
    ray = pytest.importorskip("ray")
    twins = {zoo["one"]: zoo["one"]}
    chosen = replace(config, checks=("known_feature", "plausibility"))
    local = mcd.run_comparison([zoo["one"]], data, METHODS, chosen, twins, ResultStore(tmp_path / "local.sqlite"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = mcd.run_comparison([zoo["one"]], data, METHODS, chosen, twins, ResultStore(tmp_path / "ray.sqlite"),
                                    executor="ray")
    finally:
        ray_executor.shutdown()
    assert not on_ray.errors and not on_ray.pending
    order = ["check", "metric", "method"]
    np.testing.assert_allclose(on_ray.rows.sort_values(order)["mean"].to_numpy(dtype=float),
                               local.rows.sort_values(order)["mean"].to_numpy(dtype=float), rtol=1e-5)
