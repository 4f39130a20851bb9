"""The explanation cache serves nothing unchecked: every kind of damaged or foreign entry, on disk or in
memory, is dropped, recomputed and replaced, and never reaches a page or the command line."""
from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest

from explainers import create
from explainers.cache import ExplanationCache, Request, cache_key, cached_only, explain_cached, problem_with
from explainers.explanation import Explanation

TEXT = "the movie was excellent , not dull"


@pytest.fixture()
def setting(keyword_classifier, tmp_path):
    encoding = keyword_classifier.encode(TEXT)
    explainer = create("leave_one_out")
    fresh = explainer.explain(keyword_classifier, encoding, 1)
    cache = ExplanationCache(directory=tmp_path / "explanations")
    key = cache_key(keyword_classifier, encoding, explainer, 1)
    return keyword_classifier, encoding, explainer, fresh, cache, key


def record(explanation: Explanation) -> dict:
    return json.loads(json.dumps(explanation.to_dict()))


def corrupt_record(fresh: Explanation, kind: str, other: dict) -> str:
    """The text of a cache file damaged in one way (``other``: a valid record of another input / method)."""
    data = record(fresh)
    if kind == "invalid json":
        return json.dumps(data)[:-40]
    if kind == "a list":
        return "[]"
    if kind == "a number":
        return "42"
    if kind == "a field missing":
        del data["words"]
    elif kind == "one word score":
        data["word_scores"] = data["word_scores"][:1]
    elif kind == "token scores of another length":
        data["token_scores"] = [0.5, 0.5]
    elif kind == "text instead of scores":
        data["word_scores"] = ["high"] * len(data["words"])
    elif kind == "a non-finite score":
        data["word_scores"][0] = float("nan")
    elif kind == "another input":
        data = other["input"]
    elif kind == "another method":
        data = other["method"]
    elif kind == "another model":
        data["provenance"]["model"]["fingerprint"] = "0123456789abcdef"
    elif kind == "another class":
        data["target"] = 0
    elif kind == "provenance of another input":
        data["provenance"]["input"]["key"] = "feedfeedfeedfeed"
    elif kind == "a label that is not text":
        data["method_label"] = {"html": "<b>"}
    return json.dumps(data)


REASONS = {  # what the log says: the entry was rejected for the right reason
    "invalid json": "Expecting|Unterminated|delimiter", "a list": "JSON list", "a number": "JSON int",
    "a field missing": "words", "one word score": "1 word scores for 7 words",
    "token scores of another length": "2 token scores", "text instead of scores": "could not convert",
    "a non-finite score": "not finite", "another input": "words of another input",
    "another method": "by 'occlusion', not 'leave_one_out'", "another model": "another model",
    "another class": "class 0, not 1", "provenance of another input": "provenance of another input",
    "a label that is not text": "not text",
}


@pytest.mark.parametrize("kind", list(REASONS))
def test_a_damaged_disk_entry_is_recomputed_and_replaced(setting, kind, caplog):
    classifier, encoding, explainer, fresh, cache, key = setting
    other = {"input": record(explainer.explain(classifier, classifier.encode("a dull film , not excellent"), 1)),
             "method": record(create("occlusion").explain(classifier, encoding, 1))}
    path = cache._path(key)
    path.parent.mkdir(parents=True)
    path.write_text(corrupt_record(fresh, kind, other))

    with caplog.at_level(logging.WARNING, logger="explainers.cache"):
        assert cached_only(explainer, classifier, encoding, 1, cache=cache) is None  # the page's peek: nothing
        served = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    assert cache.rejected == 1
    assert any(re.search(REASONS[kind], message) for message in caplog.messages), caplog.messages
    assert "cache" not in served.provenance  # computed, not served from the cache
    np.testing.assert_allclose(served.word_scores, fresh.word_scores, rtol=1e-12)
    assert served.words == encoding.words and served.target == 1
    # replaced on disk by the recomputed entry, which now checks out and is served from there
    replaced = Explanation.from_dict(json.loads(path.read_text()))
    assert problem_with(replaced, Request.of(classifier, encoding, explainer, 1)) is None
    cache.clear()
    again = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    assert again.provenance["cache"] == "disk" and cache.rejected == 1
    np.testing.assert_allclose(again.word_scores, fresh.word_scores, rtol=1e-12)


def test_a_bad_entry_in_memory_is_dropped_and_replaced(setting):
    classifier, encoding, explainer, fresh, _, key = setting
    cache = ExplanationCache(directory=None)  # memory only: the level shared by every session of the app
    bad = Explanation.from_dict({**record(fresh), "word_scores": [0.3]})
    cache.put(key, bad)
    assert cached_only(explainer, classifier, encoding, 1, cache=cache) is None
    assert cache.rejected == 1
    served = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    assert served.word_scores.shape == (encoding.n_words,)
    again = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    assert again.provenance["cache"] == "memory"
    np.testing.assert_allclose(again.word_scores, fresh.word_scores, rtol=1e-12)
    assert cache.rejected == 1


def test_a_bad_disk_entry_never_enters_the_memory_level(setting):
    classifier, encoding, explainer, fresh, cache, key = setting
    path = cache._path(key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**record(fresh), "word_scores": [0.3]}))
    assert cache.get(key) is None  # even without the request: the record is inconsistent in itself
    assert key not in cache._items and not path.exists()


class InterleavedCache(ExplanationCache):
    """A cache whose reader is overtaken between reading an entry and rejecting it: ``meanwhile`` runs there, as
    another thread would (the page's peek and a background job look up the same key at once)."""

    meanwhile = staticmethod(lambda: None)

    def _reject(self, *args, **kwargs):
        self.meanwhile()
        super()._reject(*args, **kwargs)


@pytest.mark.parametrize("where", ["disk", "memory"])
def test_a_rejection_never_removes_the_good_entry_another_thread_stored_meanwhile(setting, tmp_path, where):
    """CI stop 26: the page's reader rejected a damaged file after a background job had already replaced it, and
    deleted the good file; the page then showed the rows and no file was ever written again."""
    classifier, encoding, explainer, fresh, _, key = setting
    cache = InterleavedCache(directory=tmp_path / "explanations")
    path = cache._path(key)
    damaged = Explanation.from_dict({**record(fresh), "word_scores": [0.3]})
    if where == "disk":
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(damaged.to_dict()))
    else:
        cache._remember(key, damaged)
    cache.meanwhile = lambda: cache.put(key, fresh)
    assert cache.get(key, Request.of(classifier, encoding, explainer, 1)) is None  # this reader saw the damage
    cache.meanwhile = lambda: None
    assert cache.rejected == 1
    served = cache.get(key, Request.of(classifier, encoding, explainer, 1))  # the good entry, still in memory
    assert served is not None and served.provenance["cache"] == "memory"
    np.testing.assert_array_equal(served.word_scores, fresh.word_scores)
    stored = Explanation.from_dict(json.loads(path.read_text()))  # and still on disk
    assert problem_with(stored, Request.of(classifier, encoding, explainer, 1)) is None


def test_a_good_entry_is_served_from_disk_then_memory(setting):
    classifier, encoding, explainer, fresh, cache, key = setting
    first = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    cache.clear()
    from_disk = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    from_memory = explain_cached(explainer, classifier, encoding, 1, cache=cache)
    assert (from_disk.provenance["cache"], from_memory.provenance["cache"]) == ("disk", "memory")
    np.testing.assert_array_equal(from_disk.word_scores, first.word_scores)
    assert cache.rejected == 0


def test_the_predicted_class_entry_is_checked_without_a_fixed_target(setting):
    classifier, encoding, explainer, _, cache, _ = setting
    first = explain_cached(explainer, classifier, encoding, None, cache=cache)
    assert first.target == int(np.argmax(classifier.logits_of(encoding)))
    assert explain_cached(explainer, classifier, encoding, None, cache=cache).provenance["cache"] == "memory"
    assert cache.rejected == 0


def test_a_stopped_marc_run_is_returned_but_not_cached_and_a_completed_one_is(keyword_classifier, tmp_path):
    from explainers.cache import is_partial

    encoding = keyword_classifier.encode(TEXT)
    cache = ExplanationCache(directory=tmp_path / "explanations")
    steps = []
    stopped_explainer = create("marc", max_steps=50, progress=steps.append, should_stop=lambda: len(steps) >= 3)
    stopped = explain_cached(stopped_explainer, keyword_classifier, encoding, 1, cache=cache)
    assert is_partial(stopped) and stopped.provenance["details"]["steps"] == 3
    key = cache_key(keyword_classifier, encoding, stopped_explainer, 1)
    assert cache.get(key) is None and not list((tmp_path / "explanations").rglob("*.json"))
    # a partial record that reached a cache file some other way is refused, not served
    assert "stopped half-way" in problem_with(stopped, Request.of(keyword_classifier, encoding, stopped_explainer, 1))
    completed = explain_cached(create("marc", max_steps=4), keyword_classifier, encoding, 1, cache=cache)
    assert not is_partial(completed) and completed.provenance["details"]["stop_reason"] == "step cap"
    served = explain_cached(create("marc", max_steps=4), keyword_classifier, encoding, 1, cache=cache)
    assert served.provenance["cache"] == "memory"
    np.testing.assert_array_equal(served.word_scores, completed.word_scores)
