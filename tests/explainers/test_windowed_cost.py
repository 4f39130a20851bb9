"""The page's cost estimate of a method on a long document counts window passes."""
import random

from tiny_models import FILLER

from explainers import create
from explainers.plan import measure_throughput
from explainers.windowed import estimate_passes, tokens_per_pass
from models import metered
from models.windows import encode_document


def test_estimates_match_the_passes_run(keyword_classifier):
    rng = random.Random(2)
    doc = encode_document(keyword_classifier, " ".join(rng.choice(FILLER) for _ in range(150)))
    keyword_classifier.logits_of(doc)  # the document's prediction, as the page computes it first
    assert tokens_per_pass(doc) <= keyword_classifier.max_length < doc.n_tokens
    measure_throughput(keyword_classifier, doc)  # one window's copies, not the whole document
    for method_id in ("leave_one_out", "saliency"):
        method = create(method_id)
        forward, _ = estimate_passes(method, doc)
        with metered() as meter:
            method.explain(keyword_classifier, doc, target=1)
        assert forward == meter.forward_passes, method_id
