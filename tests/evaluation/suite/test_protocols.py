"""The report card's and the model comparison's protocols: under ``paper-003`` the faithfulness check is
the thesis's Def. 2.1 / 2.2 (5/10/20/50 %, ceil, [MASK], mean |delta p|, n counting [CLS]/[SEP]) on the
known-feature task, recomputed here by hand from the model's probabilities; its randomization draws N(0, 1) weights;
every check is named by what it runs; the two protocols never share a card, a comparison or a study."""
from __future__ import annotations

import math
from html import escape

import numpy as np
import pytest
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from tiny_models import keyword_sentences

from corpora import load_dataset
from evaluation import summary
from evaluation.runs.store import ResultStore
from evaluation.suite import model_comparison_dataset as mcd
from evaluation.suite import report_card as rc
from evaluation.suite import report_card_rules as rcr
from evaluation.suite.protocols import PROTOCOLS, check_runs, get_protocol
from evaluation.suite.report_card_html import card_html
from models import ModelError, cached_classifier, randomize

METHODS = ["saliency", "input_x_gradient"]  # continuous scores: no ties, so the ranking needs no tie-break
COMP, SUFF = (0.05, 0.10, 0.20, 0.50), (0.95, 0.90, 0.80, 0.50)  # paper 003 s. 2.2.3.2 (seed-003.md s. 3.2)


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    return str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("keyword-model")))


@pytest.fixture(scope="module")
def known_feature_data(tmp_path_factory):
    return write_rationale_csv(tmp_path_factory.mktemp("kf") / "keyword.csv", 4, seed=3)


@pytest.fixture(scope="module")
def card_data(tmp_path_factory):
    """The card's own dataset: other sentences, without rationales (paper 003's faithfulness must not read it)."""
    texts, labels = keyword_sentences(4, seed=11)
    path = tmp_path_factory.mktemp("card") / "plain.csv"
    path.write_text("text,label\n" + "\n".join(f"{t},{y}" for t, y in zip(texts, labels)) + "\n")
    return f"file:{path}"


@pytest.fixture(scope="module")
def cards(keyword_folder, known_feature_data, card_data, tmp_path_factory):
    store = ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite")
    built = {}
    for protocol in PROTOCOLS:
        config = rc.CardConfig.quick(checks=("faithfulness", "sanity"), limit=4, known_feature_model=keyword_folder,
                                     known_feature_dataset=known_feature_data, protocol=protocol)
        built[protocol] = rc.build_report_card(keyword_folder, card_data, METHODS, config=config, store=store)
    return store, built


def _thesis_values(classifier, text: str, scores) -> tuple[float, float]:
    """Def. 2.2 / 2.1 as the thesis code computes and plots them, by hand: n = words + [CLS] + [SEP]; the top
    ceil(s n) words replaced by [MASK] (comprehensiveness), the bottom ceil(s n) (sufficiency, at most every word);
    m = the predicted class's probability; the mean over the levels of |m(x) - m(x')|."""
    words = text.split()
    probabilities = classifier.predict_text(text)
    predicted = int(np.argmax(probabilities))
    n = len(words) + 2
    order = list(np.argsort(-np.asarray(scores), kind="stable"))  # most important first

    def masked(indices) -> float:
        return float(classifier.predict_text(" ".join("[MASK]" if i in indices else w
                                                      for i, w in enumerate(words)))[predicted])

    def count(s: float) -> int:
        return min(len(words), math.ceil(round(s * n, 9)))

    comp = np.mean([abs(probabilities[predicted] - masked(set(order[:count(s)]))) for s in COMP])
    suff = np.mean([abs(probabilities[predicted] - masked(set(order[len(words) - count(s):]))) for s in SUFF])
    return float(comp), float(suff)


def test_paper_003_faithfulness_is_the_thesis_formula_on_the_known_feature_task(cards, keyword_folder,
                                                                                 known_feature_data):
    store, built = cards
    card = built["paper-003"]
    study = store.get_run(card["runs"]["faithfulness"])
    # the known-feature task and its model, not the card's dataset; the thesis's preset; [CLS]/[SEP] counted in n
    assert study["config"]["dataset"] == known_feature_data and study["config"]["model"] == keyword_folder
    assert study["config"]["evaluators"] == ["paper-003-code"]
    assert study["config"]["options"]["exclude_special"] is False
    classifier = cached_classifier(keyword_folder)
    examples = {e.id: e for e in load_dataset(known_feature_data, limit=4)}
    by_hand = {m: ([], []) for m in METHODS}
    for key, cell in store.cells(card["runs"]["faithfulness"]).items():
        for method in METHODS:
            scores = cell["explanations"][method]["scores"]
            assert len(set(scores)) == len(scores)  # no ties: the hand ranking is the metric's
            comp, suff = _thesis_values(classifier, examples[key].text, scores)
            by_hand[method][0].append(comp)
            by_hand[method][1].append(suff)
    rows = {r["method"]: r for r in card["rows"] if r["check"] == "faithfulness"}
    for method in METHODS:
        assert rows[method]["n"] == 4
        assert rows[method]["mean"] == pytest.approx(np.mean(by_hand[method][0]), abs=1e-6)  # float32 model
        # the verdict is the paper-003 rule on that value against the random orderings' band of the same metric
        rule = rcr.rule_for("faithfulness", "paper-003")
        assert rule.metric == "comprehensiveness-003-code" and rows[method]["rule"] == rule.text
        assert rows[method]["reference_low"] is not None
        assert rows[method]["verdict"] == rcr.verdict(rule, rows[method]["low"], rows[method]["high"],
                                                     rows[method]["reference_low"], rows[method]["reference_high"])
    # sufficiency comes from the same study: the comparison shows it
    table = summary.summarize(summary.results_frame(store, card["runs"]["faithfulness"]))
    for method in METHODS:
        found = table[(table["method"] == method) & (table["metric"] == "sufficiency-003-code")].iloc[0]
        assert found["mean"] == pytest.approx(np.mean(by_hand[method][1]), abs=1e-6)


def test_the_default_protocol_still_runs_eraser_on_the_cards_dataset(cards, keyword_folder, card_data):
    store, built = cards
    card = built["default"]
    study = store.get_run(card["runs"]["faithfulness"])
    assert study["config"]["dataset"] == card_data and study["config"]["evaluators"] == ["eraser"]
    assert {r["metric"] for r in card["rows"] if r["check"] == "faithfulness"} == {"comprehensiveness-eraser"}
    # the default's stored configuration has no protocol key: the cards stored before it keep their run ids
    assert "protocol" not in card["config"] and card["protocol"] == "default"


def _layer_weight_std(classifier) -> float:
    weight = classifier.model.bert.encoder.layer[0].attention.self.query.weight
    return float(weight.detach().std())


def test_paper_003_randomization_draws_normal_weights_and_default_the_models_init(cards, keyword_folder):
    store, built = cards
    classifier = cached_classifier(keyword_folder)
    last = randomize.stage_names(classifier)[-1]
    stds = {}
    for protocol, card in built.items():
        study = store.get_run(card["runs"]["sanity"])
        init = study["config"]["init"]
        assert init == get_protocol(protocol).sanity_init
        stds[protocol] = _layer_weight_std(randomize.randomized(classifier, last, "cascading", init, 0))
    # N(0, 1) on 32 x 32 weights: the sample std is 1 within a few standard errors (1 / sqrt(2 * 1024) ~ 0.022)
    assert stds["paper-003"] == pytest.approx(1.0, abs=0.1)
    # the model's own initializer (BERT: N(0, 0.02))
    assert stds["default"] < 0.1
    assert card["runs"]["sanity"] != built["default"]["runs"]["sanity"]


def test_every_check_is_named_by_what_it_runs(cards, card_data):
    _, built = cards
    default = {r["check"]: r["label"] for r in built["default"]["rules"]}
    paper = {r["check"]: r["label"] for r in built["paper-003"]["rules"]}
    assert "ERASER AOPC" in default["faithfulness"] and card_data in default["faithfulness"]
    assert "words deleted" in default["faithfulness"]
    assert "model's own initializer" in default["sanity"]
    assert "Def. 2.2" in paper["faithfulness"] and "[MASK]" in paper["faithfulness"]
    assert "known-feature task" in paper["faithfulness"] and card_data not in paper["faithfulness"]
    assert "N(0, 1)" in paper["sanity"]
    for protocol, card in built.items():
        for row in card["rows"]:  # every row (the table, the exports) carries the protocol's name of its check
            assert row["label"] == rcr.check_name(row["check"], protocol, card_data)
    page = card_html(built["paper-003"])  # the HTML export says which protocol and names each check
    assert "protocol <code>paper-003</code>" in page and escape(paper["faithfulness"]) in page
    for check in rcr.RULES:  # a name for every check under every protocol
        for protocol in PROTOCOLS:
            assert rcr.check_name(check, protocol, "sst2:dev").startswith(rcr.RULES[check].label + ": ")
            assert check_runs(check, protocol, "sst2:dev")


def test_the_protocols_never_share_a_card_or_a_study(cards):
    _, built = cards
    assert built["default"]["run_id"] != built["paper-003"]["run_id"]
    for check in ("faithfulness", "sanity"):
        assert built["default"]["runs"][check] != built["paper-003"]["runs"][check]


def test_an_unknown_protocol_is_a_message_before_any_work(keyword_folder, card_data, tmp_path):
    with pytest.raises(ModelError, match="Unknown protocol 'paper-999'.*default, paper-003"):
        rc.start_report_card(keyword_folder, card_data, METHODS, rc.CardConfig(protocol="paper-999"),
                             ResultStore(tmp_path / "r.sqlite"))
    with pytest.raises(ModelError, match="Unknown protocol"):
        mcd.start_comparison([keyword_folder], card_data, METHODS, mcd.ComparisonConfig(protocol="paper-999"),
                             store=ResultStore(tmp_path / "r.sqlite"))


def test_the_comparison_runs_paper_003_faithfulness_on_each_twin(keyword_folder, known_feature_data, card_data,
                                                                 cards, tmp_path):
    """The comparison's paper-003 cells are the card's: the same values, both metrics, the protocol exported."""
    store, built = cards
    config = mcd.ComparisonConfig.quick(checks=("faithfulness",), limit=4, known_feature_dataset=known_feature_data,
                                        protocol="paper-003")
    comparison = mcd.run_comparison([keyword_folder], card_data, METHODS, config, {keyword_folder: keyword_folder},
                                    store)
    assert set(comparison.rows["metric"]) == {"comprehensiveness-003-code", "sufficiency-003-code"}
    card_rows = {r["method"]: r for r in built["paper-003"]["rows"] if r["check"] == "faithfulness"}
    for method in METHODS:
        row = comparison.rows[(comparison.rows["method"] == method)
                              & (comparison.rows["metric"] == "comprehensiveness-003-code")].iloc[0]
        assert row["mean"] == card_rows[method]["mean"]
    assert comparison.computed == {f"{keyword_folder}: faithfulness": 0}  # the card's study, reopened
    exported = mcd.export(comparison)
    assert exported["protocol"] == "paper-003" and "Def. 2.2" in exported["checks"]["faithfulness"]
    assert exported["rules"]["faithfulness"]["metric"] == "comprehensiveness-003-code"
    # without a twin the check is not applicable under paper-003 (it runs on the known-feature task)
    alone = mcd.run_comparison([keyword_folder], card_data, METHODS, config, {}, ResultStore(tmp_path / "r.sqlite"))
    assert alone.rows["not_applicable"].notna().all()
