"""The report card: verdict rules at their boundaries on hand-made intervals, the ordering on a hand-made
card (ties stay ties), the whole build on the tiny keyword model saved to a folder (values recomputed another way,
nothing recomputed on a second build), and the HTML export's escaping."""
from __future__ import annotations

import json
from html import escape

import numpy as np
import pytest
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from scipy.stats import spearmanr
from tiny_models import keyword_sentences

from evaluation import summary
from evaluation.runs.store import ResultStore
from evaluation.suite import report_card as rc
from evaluation.suite import report_card_rules as rcr
from evaluation.suite import runner
from evaluation.suite.report_card_html import card_html, interval_text, reference_text
from models import ModelError

METHODS = ["saliency", "leave_one_out", "attention"]


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    return str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("keyword-model")))


@pytest.fixture(scope="module")
def rationale_data(tmp_path_factory):
    return write_rationale_csv(tmp_path_factory.mktemp("data") / "keyword.csv", 6, seed=3)


@pytest.fixture(scope="module")
def built(keyword_folder, rationale_data, tmp_path_factory):
    store = ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite")
    config = rc.CardConfig.quick(known_feature_model=keyword_folder, known_feature_dataset=rationale_data)
    card = rc.build_report_card(keyword_folder, rationale_data, METHODS, config=config, store=store)
    return store, config, card


# ----- rules -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("low, high, expected", [
    (0.51, 0.9, rcr.PASS),          # entirely above the band's upper bound
    (0.5, 0.9, rcr.INCONCLUSIVE),   # touching the upper bound is an overlap
    (0.0, 0.09, rcr.FAIL),          # entirely below the lower bound
    (0.0, 0.1, rcr.INCONCLUSIVE),   # touching the lower bound
    (0.2, 0.3, rcr.INCONCLUSIVE),   # inside the band
    (0.05, 0.6, rcr.INCONCLUSIVE),  # wider than the band
])
def test_above_band_rule_boundaries(low, high, expected):
    assert rcr.verdict(rcr.RULES["faithfulness"], low, high, 0.1, 0.5) == expected


@pytest.mark.parametrize("low, high, expected", [
    (0.05, 0.29, rcr.PASS),         # entirely below the band: the feature is found earlier than chance
    (0.05, 0.3, rcr.INCONCLUSIVE),  # touching the lower bound
    (0.71, 0.99, rcr.FAIL),         # entirely above: found later than chance (a method that ranks it last)
    (0.4, 0.6, rcr.INCONCLUSIVE),
])
def test_known_feature_rule_reads_the_rank_and_can_fail(low, high, expected):
    """The known-feature rule reads the mean rank % (lower is better): a method that ranks the known word last fails,
    which the overlap could not do on a short sample (its random band starts at 0)."""
    rule = rcr.RULES["known_feature"]
    assert (rule.metric, rule.kind) == ("known-feature.rank-fraction", "below_band")
    assert rcr.verdict(rule, low, high, 0.3, 0.7) == expected


def test_the_rules_are_part_of_the_cards_identity(built):
    """A card stored under other rules (e.g. before the known-feature rule read the rank) is never re-read."""
    store, _, card = built
    rules = store.get_run(card["run_id"])["config"]["rules"]
    assert rules["known_feature"] == ["known-feature.rank-fraction", "below_band"]
    assert set(rules) == {r["check"] for r in card["rules"]}


@pytest.mark.parametrize("low, high, expected", [
    (-0.3, 0.19, rcr.PASS), (0.21, 0.8, rcr.FAIL), (0.1, 0.3, rcr.INCONCLUSIVE), (0.2, 0.5, rcr.INCONCLUSIVE),
])
def test_sanity_rule_compares_with_the_chance_band_upper_bound(low, high, expected):
    assert rcr.verdict(rcr.RULES["sanity"], low, high, -0.2, 0.2) == expected


@pytest.mark.parametrize("low, high, expected", [
    (0.1, 0.49, rcr.PASS), (0.51, 0.9, rcr.FAIL), (0.4, 0.6, rcr.INCONCLUSIVE), (0.5, 0.7, rcr.INCONCLUSIVE),
])
def test_attack_rule_threshold_is_half_the_top_k(low, high, expected):
    assert rcr.verdict(rcr.RULES["adversarial"], low, high) == expected


def test_missing_values_are_inconclusive_and_every_rule_is_written():
    assert rcr.verdict(rcr.RULES["faithfulness"], float("nan"), 0.3, 0.1, 0.2) == rcr.INCONCLUSIVE
    assert rcr.verdict(rcr.RULES["faithfulness"], 0.5, 0.6, None, None) == rcr.INCONCLUSIVE
    for rule in rcr.RULES.values():
        assert rule.text.startswith("pass:") and "fail:" in rule.text and "inconclusive:" in rule.text


# ----- ordering ----------------------------------------------------------------------------------------------
def _rows(method, verdicts):
    return [{"method": method, "check": check, "verdict": v} for check, v in verdicts.items()]


def test_ordering_counts_passes_then_fewer_fails_and_keeps_ties():
    p, f, i, na = rcr.PASS, rcr.FAIL, rcr.INCONCLUSIVE, rcr.NOT_APPLICABLE
    rows = (_rows("A", {"faithfulness": p, "sanity": p, "adversarial": f, "agreement": p})
            + _rows("B", {"faithfulness": p, "sanity": p, "adversarial": i, "agreement": f})
            + _rows("C", {"faithfulness": p, "sanity": f, "adversarial": na, "agreement": p})
            + _rows("D", {"faithfulness": p, "sanity": i, "adversarial": na, "agreement": f})
            + _rows("E", {"faithfulness": p, "sanity": p, "adversarial": i, "agreement": p}))
    order = rcr.ordering(rows, ["A", "B", "C", "D", "E"])
    # agreement is not counted: B and E tie (2 passes, 0 fails) ahead of A (2, 1); D (1, 0) ahead of C (1, 1)
    assert [(o["method"], o["rank"]) for o in order] == [("B", 1), ("E", 1), ("A", 3), ("D", 4), ("C", 5)]
    first = order[0]
    assert (first["passes"], first["fails"], first["inconclusive"], first["not_applicable"]) == (2, 0, 1, 0)
    assert first["tied_with"] == ["E"] and "tied with E" in first["reasoning"]
    assert "1 fail (Robust to the attack)" in order[2]["reasoning"]
    assert order[3]["not_applicable"] == 1 and not order[3]["tied_with"]


# ----- the whole build on the keyword model ------------------------------------------------------------------
def test_every_method_gets_every_check_with_a_verdict_from_its_rule(built):
    store, config, card = built
    assert not card["errors"] and not card["pending"] and card["status"] == "finished"
    assert {(r["method"], r["check"]) for r in card["rows"]} == {(m, c) for m in METHODS for c in config.checks}
    for row in card["rows"]:
        if row["verdict"] == rcr.NOT_APPLICABLE:
            assert row["rule"] == row["not_applicable"]
            continue
        assert row["rule"] == rcr.RULES[row["check"]].text
        assert row["low"] <= row["mean"] <= row["high"]
        assert row["verdict"] == rcr.verdict(rcr.RULES[row["check"]], row["low"], row["high"], row["reference_low"],
                                            row["reference_high"])
    by = {(r["method"], r["check"]): r for r in card["rows"]}
    # the attack needs gradients: leave-one-out and attention are not applicable, with the reason
    assert by[("leave_one_out", "adversarial")]["verdict"] == rcr.NOT_APPLICABLE
    assert "differentiable" in by[("attention", "adversarial")]["not_applicable"]
    assert by[("saliency", "adversarial")]["verdict"] != rcr.NOT_APPLICABLE
    # the keyword model reads only the keyword: leave-one-out ranks it first in every sentence (rank % = 1 / n)
    rows = summary.results_frame(store, card["runs"]["known_feature"])
    loo = rows[(rows["method"] == "leave_one_out") & (rows["metric"] == "known-feature.rank")]
    assert set(loo["value"]) == {1.0}
    fractions = rows[(rows["method"] == "leave_one_out") & (rows["metric"] == "known-feature.rank-fraction")]["value"]
    assert by[("leave_one_out", "known_feature")]["mean"] == pytest.approx(fractions.mean())
    assert by[("leave_one_out", "known_feature")]["verdict"] == rcr.PASS
    assert [o["method"] for o in card["ordering"]] and {o["method"] for o in card["ordering"]} == set(METHODS)


def test_agreement_is_the_mean_spearman_with_the_other_methods(built):
    store, _, card = built
    run_id = card["runs"]["agreement"]
    per_method = {m: [] for m in METHODS}
    for cell in store.cells(run_id).values():
        scores = {m: np.abs(cell["explanations"][m]["scores"]) for m in METHODS}
        for m in METHODS:
            rhos = [spearmanr(scores[m], scores[o]).statistic for o in METHODS if o != m]
            rhos = [r for r in rhos if np.isfinite(r)]
            if rhos:
                per_method[m].append(np.mean(rhos))
    for row in (r for r in card["rows"] if r["check"] == "agreement"):
        assert row["mean"] == pytest.approx(np.mean(per_method[row["method"]]), abs=1e-9)  # float64 on both sides
        assert row["n"] == len(per_method[row["method"]])


def test_a_second_build_recomputes_nothing(built, keyword_folder, rationale_data):
    store, config, card = built
    assert sum(card["computed_cells"].values()) > 0
    again = rc.build_report_card(keyword_folder, rationale_data, METHODS, config=config, store=store)
    assert again["rows"] == card["rows"] and again["run_id"] == card["run_id"]
    # a card with the checks in another order is a new card run, yet every study behind it is reused
    reordered = rc.build_report_card(keyword_folder, rationale_data, METHODS,
                                     config=rc.CardConfig.quick(**{**config.to_dict(),
                                                                   "checks": tuple(reversed(config.checks))}),
                                     store=store)
    assert reordered["run_id"] != card["run_id"]
    assert reordered["computed_cells"] == {check: 0 for check in config.checks}
    assert sorted(map(json.dumps, reordered["rows"])) == sorted(map(json.dumps, card["rows"]))


def test_no_rationales_or_a_single_method_is_not_applicable(keyword_folder, tmp_path):
    texts, labels = keyword_sentences(3, seed=5)
    path = tmp_path / "plain.csv"
    path.write_text("text,label\n" + "\n".join(f"{t},{y}" for t, y in zip(texts, labels)) + "\n")
    card = rc.build_report_card(keyword_folder, f"file:{path}", ["saliency"],
                                config=rc.CardConfig.quick(checks=("plausibility", "agreement")),
                                store=ResultStore(tmp_path / "r.sqlite"))
    plausibility, agreement = card["rows"]
    assert plausibility["verdict"] == rcr.NOT_APPLICABLE and "no human rationales" in plausibility["rule"]
    assert agreement["verdict"] == rcr.NOT_APPLICABLE and "at least two methods" in agreement["rule"]
    assert card["ordering"][0]["not_applicable"] == 1  # agreement is not counted


def test_bad_input_is_a_message_before_any_work(keyword_folder, rationale_data, tmp_path):
    with pytest.raises(ModelError, match="Unknown check"):
        rc.start_report_card(keyword_folder, rationale_data, METHODS, rc.CardConfig(checks=("speed",)),
                             ResultStore(tmp_path / "r.sqlite"))
    with pytest.raises(ModelError, match="Unknown method"):
        rc.start_report_card(keyword_folder, rationale_data, ["nonsense"], store=ResultStore(tmp_path / "r.sqlite"))


# ----- HTML --------------------------------------------------------------------------------------------------
def test_html_escapes_every_text(built):
    _, _, card = built
    evil = "<script>alert(1)</script>"
    hostile = {**card, "model": evil, "methods": [evil, *card["methods"][1:]],
               "rows": [{**r, "method": evil if r["method"] == card["methods"][0] else r["method"],
                         "note": evil} for r in card["rows"]],
               "ordering": [{**o, "method": evil, "reasoning": evil} for o in card["ordering"]]}
    page = card_html(hostile)
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "http" not in page and "<link" not in page  # self-contained
    assert page.count("class='v-") == len(card["rows"])
    for rule in card["rules"]:
        assert escape(rule["text"]) in page


def test_a_stop_reaches_the_study_inside_a_check_and_a_rebuild_resumes_it(keyword_folder, rationale_data, tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    config = rc.CardConfig.quick(checks=("faithfulness",), limit=4)
    calls = []

    def stop_on_fourth_check():  # 1: the card before its cell; 2, 3, 4: the study before each of its examples
        calls.append(1)
        return len(calls) >= 4

    card = rc.build_report_card(keyword_folder, rationale_data, ["leave_one_out"], config=config, store=store,
                                should_stop=stop_on_fourth_check)
    assert card["status"] == "cancelled" and card["pending"] == ["faithfulness"] and not card["rows"]
    _, study, _ = runner.start_evaluation(keyword_folder, rationale_data, ["leave_one_out"], ["eraser"], 4,
                                          {"random_orderings": config.random_orderings, "seed": config.seed}, store)
    assert len(store.cells(study)) == 2  # stopped between examples, the finished ones kept
    resumed = rc.build_report_card(keyword_folder, rationale_data, ["leave_one_out"], config=config, store=store)
    assert resumed["status"] == "finished" and resumed["computed_cells"] == {"faithfulness": 2}


def test_interval_and_reference_texts():
    row = {"mean": 0.25, "low": 0.125, "high": 0.5, "n": 7, "reference_low": -0.0625, "reference_high": 0.0625}
    assert interval_text(row) == "0.250 [0.125, 0.500] (n = 7)"
    assert reference_text(row) == "vs [-0.062, 0.062]"
    assert reference_text({**row, "reference_low": 0.0, "reference_high": 0.0}) == "vs 0.000"
    assert reference_text({**row, "reference_low": None, "reference_high": None}) == ""
    assert interval_text({**row, "mean": None}) == ""


def test_sanity_check_explains_only_the_fully_randomized_model_and_matches_the_full_study(built, keyword_folder,
                                                                                           rationale_data, tmp_path):
    """The card reads the last cascading stage only, so it explains the original and that stage; its interval is
    the one the full study (every stage, the Sanity page's run) gives at that stage."""
    from evaluation.sanity import dataset as sanity
    from models import cached_classifier, randomize

    store, config, card = built
    stored = sanity.results_frame(store, card["runs"]["sanity"])
    last = randomize.stage_names(cached_classifier(keyword_folder))[-1]
    assert set(stored[stored["stage_index"] > 0]["stage"]) == {last}  # index 0: the original model
    full_store, summary = sanity.run_sanity_study(keyword_folder, rationale_data, METHODS, config.sanity_limit,
                                                  "layers", "cascading", "model", config.seed,
                                                  store=ResultStore(tmp_path / "full.sqlite"))
    full = sanity.results_frame(full_store, summary.run_id)
    assert len(set(full[full["stage_index"] > 0]["stage"])) > 1  # the full study explains every stage
    curve = sanity.curves(sanity.summarize(full, seed=config.seed), [last], rcr.RULES["sanity"].metric)
    for row in (r for r in card["rows"] if r["check"] == "sanity"):
        expected = curve[curve["method"] == row["method"]].iloc[0]
        assert (row["mean"], row["low"], row["high"]) == pytest.approx(
            (expected["mean"], expected["low"], expected["high"]), abs=1e-6)  # rank statistics of float32 scores


def test_sanity_serves_the_original_models_explanations_from_a_faithfulness_run_with_the_same_values(
        keyword_classifier, isolated_cache):
    """The card's faithfulness and sanity checks explain the same first examples on the original model with the same
    methods: the sanity cell ("original" sharing) takes those explanations from the cache where the faithfulness
    run stored them for "the predicted class", and writes nothing for the randomized copies. Its values are those of
    a sanity run without any cache."""
    from evaluation.sanity.one_input import run_sanity
    from explainers import create_from_spec
    from explainers.cache import ExplanationCache
    from explainers.shared_passes import explain_all

    cache = ExplanationCache(directory=isolated_cache)
    encoding = keyword_classifier.encode(keyword_sentences(2, seed=5)[0][1])
    explain_all([create_from_spec(m) for m in METHODS], keyword_classifier, encoding, None, cache=cache)
    stored = sorted(p for p in isolated_cache.rglob("*") if p.is_file())
    assert len(stored) == len(METHODS)  # what the faithfulness run leaves: one entry per method
    shared = run_sanity(keyword_classifier, encoding, METHODS, cache=cache, cache_randomized=False, chance_draws=1)
    alone = run_sanity(keyword_classifier, encoding, METHODS, cache=None, chance_draws=1)
    assert all("cache" in e.provenance for e in shared.stages[0].explanations.values())  # served, not recomputed
    assert not any("cache" in e.provenance for s in shared.stages[1:] for e in s.explanations.values())
    assert sorted(p for p in isolated_cache.rglob("*") if p.is_file()) == stored  # no randomized copy written
    mine, theirs = shared.frame(), alone.frame()
    assert mine[["stage", "method"]].equals(theirs[["stage", "method"]]) and len(mine) > len(METHODS)
    measures = [c for c in mine.columns if c not in ("stage", "stage_index", "method", "predicted", "fingerprint")]
    # the shared pass and the lone explainer may sum float32 terms in another order: float32 precision on values <= 1
    np.testing.assert_allclose(mine[measures].to_numpy(float), theirs[measures].to_numpy(float), rtol=0, atol=1e-5)
