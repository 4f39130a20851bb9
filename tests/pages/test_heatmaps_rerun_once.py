"""A Heatmaps rerun does each piece of its work once: per chosen method one explainer created, one cache
key computed and one cache probe, on a cached page as on the page that computes. Counted on the real objects (the
counting wrappers call the real methods through), on the real page (AppTest) with the real default-quick model."""
from __future__ import annotations

from collections import Counter

import pytest

pytestmark = pytest.mark.integration

from conftest import ROOT

METHODS = ["attention", "leave_one_out", "saliency"]  # bench/bench_load.py's link
SHORT_EXAMPLE = 2


@pytest.fixture()
def counts(quick_classifier, monkeypatch):
    """Per method id: explainers created, cache keys computed (``cache_identity`` is called by ``cache_key`` only),
    cache probes (``ExplanationCache.get``)."""
    from explainers import cache
    from explainers.base import Explainer

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    seen = {"created": Counter(), "keyed": Counter(), "probed": Counter()}
    real_init, real_identity, real_get = Explainer.__init__, Explainer.cache_identity, cache.ExplanationCache.get

    def init(self, *args, **kwargs):
        seen["created"][type(self).id] += 1
        real_init(self, *args, **kwargs)

    def identity(self):
        seen["keyed"][self.id] += 1
        return real_identity(self)

    def get(self, key, request=None):
        seen["probed"][request.method_id if request is not None else "?"] += 1
        return real_get(self, key, request)

    monkeypatch.setattr(Explainer, "__init__", init)
    monkeypatch.setattr(Explainer, "cache_identity", identity)
    monkeypatch.setattr(cache.ExplanationCache, "get", get)
    yield seen
    cache.DEFAULT_CACHE.clear()


def page_run(at, seen) -> dict[str, Counter]:
    for counter in seen.values():
        counter.clear()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return {name: Counter(counter) for name, counter in seen.items()}


def test_a_heatmaps_rerun_creates_keys_and_probes_each_method_once(counts):
    from streamlit.testing.v1 import AppTest

    from explainers import cache

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:example_index"] = SHORT_EXAMPLE
    at.session_state["keep:methods"] = list(METHODS)
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    page_run(at, counts)
    cache.DEFAULT_CACHE.clear()
    computing = page_run(at, counts)  # nothing cached: this run computes the three methods
    assert not any(e.provenance.get("cache") for e in at.session_state["heatmaps:export"].explanations)
    rows = [e.method_id for e in at.session_state["heatmaps:export"].explanations]
    assert sorted(rows) == sorted(METHODS)
    once = Counter({m: 1 for m in METHODS})
    assert computing["created"] == once
    assert computing["keyed"] == once
    # a method computed in this run is probed twice: by the plan (a miss), and again as it runs, because another
    # session may have stored it in between (explain_cached); a cached method once
    assert computing["probed"] == Counter({m: 2 for m in METHODS})
    cached = page_run(at, counts)  # a rerun: everything comes from the cache
    assert {e.provenance.get("cache") for e in at.session_state["heatmaps:export"].explanations} == {"memory"}
    assert cached == {"created": once, "keyed": once, "probed": once}
