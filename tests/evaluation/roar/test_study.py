"""A whole ROAR + Recursive ROAR study on the tiny keyword model (seconds): a faithful measure (leave-one-out)
removes the keyword and loses accuracy that random masking keeps; cells land in the store, resume after a
stop or a restart, run in the background, export and import, and give the same numbers when recomputed."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv

from evaluation.roar import scores as roar_scores
from evaluation.roar.cost import retrain_count
from evaluation.roar.data import study_data
from evaluation.roar.measures import resolve_measure
from evaluation.roar.steps import static_masks
from evaluation.roar.study import build_config, cells_of_run, prepare_study, roar_cell, run_study, study_cells
from evaluation.roar.training import Variant
from evaluation.runs.jobs import JOBS, run_cells
from evaluation.runs.store import ResultStore
from models import ModelError

pytestmark = pytest.mark.training  # ROAR retrains the model at every ratio


@pytest.fixture(scope="module")
def env(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("roar")
    folder = save_keyword_model(keyword_classifier, root / "model")
    data = root / "data"
    data.mkdir()
    write_keyword_csv(data / "train.csv", 100, seed=1)
    write_keyword_csv(data / "test.csv", 40, seed=2)
    from explainers.cache import DEFAULT_CACHE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(root / "cache"))
        patch.setattr(DEFAULT_CACHE, "directory", root / "cache" / "explanations")
        yield SimpleNamespace(root=root, folder=folder, data=data)


@pytest.fixture(scope="module")
def study(env):
    config = build_config(**tiny_study_kwargs(env.folder, env.data))
    store = ResultStore(env.root / "results.sqlite")
    seen = []
    store, summary = run_study(config, store, progress=lambda done, total, left: seen.append((done, total)))
    frame = roar_scores.cells_frame(store.cells(summary.run_id))
    return SimpleNamespace(config=config, store=store, summary=summary, frame=frame, progress=seen)


def _accuracy(frame, kind, measure, ratio, seed):
    row = frame[(frame["kind"] == kind) & (frame["measure"] == measure) & (frame["ratio"] == ratio)
                & (frame["seed"] == seed)]
    assert len(row) == 1
    return float(row["accuracy"].iloc[0])


def test_every_cell_finishes_and_lands_in_the_store(study):
    counts = retrain_count(study.config)
    # anchors 2 x 2 seeds + (loo, attention, random) x 2 ratios x 2 seeds + recursive 2 x 2 x 2
    assert counts["total"] == 4 + 12 + 8 == len(study_cells(study.config))
    assert study.summary.status == "finished" and not study.summary.errors
    assert len(study.frame) == counts["total"]
    assert study.progress[-1] == (24, 24) and len(study.progress) == 25  # one report per finished cell (+ start)
    run = study.store.get_run(study.summary.run_id)
    assert run["status"] == "finished" and run["done"] == 24


def test_leave_one_out_removes_the_keyword_and_random_does_not(study):
    frame = study.frame
    for seed in (0, 1):
        assert _accuracy(frame, "anchor", "anchor", 0.0, seed) >= 0.9
        assert _accuracy(frame, "anchor", "anchor", 100.0, seed) == 0.5  # 20/20 test set, nothing left to read
        for ratio in (20.0, 50.0):
            assert _accuracy(frame, "roar", "loo", ratio, seed) < _accuracy(frame, "roar", "random", ratio, seed) - 0.1
    scores = roar_scores.summary(frame).set_index(["mode", "measure"])
    row = scores.loc[("roar", "loo")]
    per_seed = roar_scores.per_seed_scores(frame, "roar", "loo")
    assert sorted(per_seed) == [0, 1] and min(per_seed.values()) > 0.3
    assert row["seeds"] == 2 and row["low"] <= row["score"] <= row["high"] and row["score"] > 0.3


def test_masks_follow_the_floor_rule_and_loo_picks_the_keyword(study):
    config, data = study.config, study_data(study.config)
    masks, _ = static_masks(config, data, resolve_measure("loo"), 20.0, seed=0)
    removed_words = []
    for encoding, gone in zip(data.encodings["test"], masks["test"]):
        assert gone.sum() == int(0.2 * encoding.n_words + 1e-9)
        removed_words += [encoding.words[i] for i in np.flatnonzero(gone)]
        if "excellent" in encoding.words and gone.sum() >= 1:
            assert encoding.words[int(np.flatnonzero(gone)[0])] == "excellent"
    assert "excellent" in removed_words
    expected_share = sum(int(0.5 * e.n_words + 1e-9) for e in data.encodings["test"]) / \
        sum(e.n_words for e in data.encodings["test"])
    cell = study.store.cells(study.summary.run_id)["loo|50|0|0"]
    assert cell["masked_share"]["test"] == pytest.approx(expected_share)


def test_recursive_step_one_is_roar_at_the_first_ratio_and_every_result_is_labelled(study):
    cells = study.store.cells(study.summary.run_id)
    for measure in ("loo", "attention"):
        for seed in (0, 1):
            assert cells[f"{measure}|20|{seed}|1"]["accuracy"] == cells[f"{measure}|20|{seed}|0"]["accuracy"]
            assert cells[f"{measure}|50|{seed}|2"]["importance_model"] == "model retrained at step 1"
    label = study.config.variant.label()
    assert all(c["variant"] == label and c["operator"] == "mask" and c["target"] == "predicted" for c in cells.values())
    assert "frozen encoder, trained head" in label and "100 train" in label


def test_a_recomputed_cell_gives_the_same_numbers(study, env, monkeypatch, tmp_path):
    cells = {c.key: c for c in study_cells(study.config)}
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "fresh"))  # no artifacts: everything is recomputed
    for key in ("loo|50|1|2", "random|20|0|0"):
        again = roar_cell(cells[key].spec)
        stored = study.store.cells(study.summary.run_id)[key]
        assert again["accuracy"] == stored["accuracy"] and again["macro_f1"] == stored["macro_f1"]
        assert not again["retrain_reused"]


def test_a_stopped_study_resumes_from_its_finished_cells_after_a_restart(env):
    config = build_config(**tiny_study_kwargs(env.folder, env.data, measures=["attention"], ratios=[50],
                                              seeds=[3], mode="roar"))
    path = env.root / "resume.sqlite"
    store, run_id, cells = prepare_study(config, ResultStore(path))
    calls = []

    def counted(spec):
        calls.append(spec["measure"]["id"] if spec["measure"] else "anchor")
        return roar_cell(spec)

    stopped = run_cells(store, run_id, cells, counted, should_stop=lambda: len(store.cells(run_id)) >= 2)
    assert stopped.status == "cancelled" and stopped.done == 2 and len(calls) == 2
    restarted = ResultStore(path)  # a new process would open the same file
    assert restarted.get_run(run_id)["status"] == "cancelled"
    config_again, cells_again = cells_of_run(restarted, run_id)
    assert config_again == config and [c.key for c in cells_again] == [c.key for c in cells]
    summary = run_cells(restarted, run_id, cells_again, counted)
    assert summary.status == "finished" and summary.done == 4 and len(calls) == 4  # only the 2 missing cells ran
    assert set(restarted.cells(run_id)) == {c.key for c in cells}


def test_a_stop_request_interrupts_the_running_cell_which_is_not_stored(env):
    config = build_config(**tiny_study_kwargs(env.folder, env.data, measures=["attention"], ratios=[40],
                                              seeds=[4], mode="roar"))
    store, run_id, cells = prepare_study(config, ResultStore(env.root / "interrupt.sqlite"))
    polls = []

    def stop_once_started():  # False when the runner checks before the cell, True when the cell polls inside
        polls.append(1)
        return len(polls) > 1

    summary = run_cells(store, run_id, cells, roar_cell, should_stop=stop_once_started)
    assert summary.status == "cancelled" and summary.done == 0 and store.cells(run_id) == {}
    assert len(polls) >= 2  # the cell itself asked (inside the retrain), not only the runner
    assert run_cells(store, run_id, cells, roar_cell).status == "finished"  # and it resumes normally


def test_background_jobs_can_be_stopped_and_resumed(env):
    config = build_config(**tiny_study_kwargs(env.folder, env.data, measures=["attention"], ratios=[30, 60],
                                              seeds=[5], mode="roar"))
    store, run_id, cells = prepare_study(config, ResultStore(env.root / "background.sqlite"))
    assert JOBS.start(store, run_id, cells, roar_cell)
    assert not JOBS.start(store, run_id, cells, roar_cell)  # already running
    JOBS.stop(run_id)
    JOBS.wait(run_id, timeout=120)
    assert not JOBS.is_running(run_id)
    run = store.get_run(run_id)
    assert run["status"] == "cancelled" and run["done"] < run["total"]
    JOBS.start(store, run_id, cells, roar_cell)
    JOBS.wait(run_id, timeout=300)
    assert store.get_run(run_id)["status"] == "finished" and store.get_run(run_id)["done"] == len(cells)


def test_export_and_import_give_the_same_scores(study, env):
    exported = json.loads(json.dumps(study.store.export_run(study.summary.run_id)))
    other = ResultStore(env.root / "laptop.sqlite")
    run_id = other.import_run(exported)
    assert run_id == study.summary.run_id
    frame = roar_scores.cells_frame(other.cells(run_id))
    left = roar_scores.summary(frame).round(12)
    right = roar_scores.summary(study.frame).round(12)
    assert left.equals(right)
    assert other.get_run(run_id)["meta"]["provenance"]["variant"] == study.config.variant.label()


def test_a_changed_model_is_refused_by_the_cells(study):
    spec = dict(study_cells(study.config)[0].spec)
    spec["config"] = {**spec["config"], "model_fingerprint": "0000000000000000"}
    with pytest.raises(ModelError, match="not the one the study was made with"):
        roar_cell(spec)


def test_bad_settings_get_clear_messages(env):
    from corpora import DataError
    from explainers import ParamError
    from models import UserFacingError

    kwargs = tiny_study_kwargs(env.folder, env.data)
    with pytest.raises(ParamError, match="Unknown importance measure 'nonsense'"):
        build_config(**{**kwargs, "measures": ["nonsense"]})
    with pytest.raises(UserFacingError, match="ratios must be increasing"):
        build_config(**{**kwargs, "ratios": [150]})
    with pytest.raises(ModelError, match="zero-embedding"):
        build_config(**{**kwargs, "operator": "zero"})
    with pytest.raises(DataError):
        build_config(**{**kwargs, "train_data": f"file:{env.data / 'missing.csv'}"})
    with pytest.raises(ParamError, match="no parameter"):
        build_config(**{**kwargs, "measure_params": {"loo": {"n_steps": 3}}})


def test_roar_bert_fills_removed_words_with_the_masked_lm(env):
    import torch
    from tiny_models import VOCAB, tiny_tokenizer
    from transformers import BertConfig, BertForMaskedLM

    from evaluation.roar.masking import masked_batch

    torch.manual_seed(3)
    mlm = BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))
    mlm.save_pretrained(env.root / "mlm")
    tiny_tokenizer().save_pretrained(env.root / "mlm")
    config = build_config(**tiny_study_kwargs(env.folder, env.data, measures=["attention"], ratios=[20, 50],
                                              seeds=[0], operator="mlm", filler=str(env.root / "mlm"),
                                              variant=Variant(train_size=40, test_size=20, epochs=1)))
    store, summary = run_study(config, ResultStore(env.root / "mlm.sqlite"))
    assert summary.status == "finished", summary.errors
    data = study_data(config)
    from models.mlm import load_filler

    masks, _ = static_masks(config, data, resolve_measure("attention"), 50.0, seed=0)
    batch = masked_batch(data.classifier, data.encodings["test"], masks["test"], "mlm", load_filler(config.filler))
    mask_id = data.classifier.tokenizer.mask_token_id
    assert all(mask_id not in row for row in batch.input_ids)  # filled with words, not [MASK]
    changed = sum(row != list(e.input_ids) for row, e in zip(batch.input_ids, data.encodings["test"]))
    assert changed > 0
    assert store.get_run(summary.run_id)["meta"]["provenance"]["operator"].startswith("mlm (")


def test_a_missing_masked_lm_says_how_to_build_it(env, monkeypatch, tmp_path):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "empty"))
    from models.mlm import clear_loaded

    clear_loaded()
    with pytest.raises(ModelError, match="prepare-mlm"):
        build_config(**tiny_study_kwargs(env.folder, env.data, operator="mlm"))
