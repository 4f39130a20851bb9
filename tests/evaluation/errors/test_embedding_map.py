"""The embedding map: vectors against the plain model run one sentence at a time, PCA coordinates against
scikit-learn's PCA (and numpy's SVD) on those vectors, the store keyed by model and dataset, clear refusals."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from tiny_models import keyword_sentences

from corpora import Example
from evaluation.errors.embedding_map import PCA as PCA_ID
from evaluation.errors.embedding_map import embed_dataset, project, projections, stored_map
from evaluation.runs.store import ResultStore
from models import UserFacingError, metered

LABELS = ("negative", "positive")


def examples(n: int = 24) -> list[Example]:
    texts, labels = keyword_sentences(n, seed=5)
    return [Example(id=f"kw:{i}", text=t, label=y, label_names=LABELS, dataset="kw")
            for i, (t, y) in enumerate(zip(texts, labels))]


def plain_vectors(classifier, data) -> np.ndarray:
    """The [CLS] state of the last layer, the plain Hugging Face model on one unpadded sentence at a time."""
    out = []
    with torch.no_grad():
        for example in data:
            inputs = classifier.tokenizer(example.text, return_tensors="pt")
            hidden = classifier.model(**inputs, output_hidden_states=True).hidden_states[-1]
            out.append(hidden[0, 0].double().numpy())
    return np.array(out)


@pytest.fixture()
def store(tmp_path):
    return ResultStore(tmp_path / "results.sqlite")


def test_vectors_and_pca_against_the_plain_model_and_scikit_learn(keyword_classifier, store):
    data = examples()
    mapped = embed_dataset(keyword_classifier, data, store=store)
    direct = plain_vectors(keyword_classifier, data)
    assert mapped.vectors.shape == direct.shape
    assert np.allclose(mapped.vectors, direct, atol=1e-4)
    coords, info = project(mapped.vectors, PCA_ID)
    expected = PCA(n_components=2).fit(direct)
    reference = expected.transform(direct)
    signs = np.sign((coords * reference).sum(axis=0))  # an axis's sign is a convention
    assert np.allclose(coords * signs, reference, atol=1e-3)
    assert np.allclose(info["explained_variance_ratio"], expected.explained_variance_ratio_, atol=1e-4)
    # the same axes from the formula: the centred vectors' two leading right-singular vectors
    centred = direct - direct.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    by_svd = centred @ vt[:2].T
    assert np.allclose(np.abs(coords), np.abs(by_svd), atol=1e-3)


def test_the_map_is_stored_per_model_and_dataset(keyword_classifier, random_classifier, store):
    data = examples(12)
    assert not stored_map(store, keyword_classifier, data)
    first = embed_dataset(keyword_classifier, data, store=store)
    assert first.computed == len(data) and stored_map(store, keyword_classifier, data)
    with metered() as meter:
        again = embed_dataset(keyword_classifier, data, store=store)
    assert again.computed == 0 and meter.forward_passes == 0 and np.array_equal(again.vectors, first.vectors)
    assert not stored_map(store, random_classifier, data)  # another model: another run
    assert not stored_map(store, keyword_classifier, data[:-1])  # another dataset: another run


def test_bad_requests_get_a_message(keyword_classifier, store):
    with pytest.raises(UserFacingError, match="no examples"):
        embed_dataset(keyword_classifier, [], store=store)
    with pytest.raises(UserFacingError, match="at least 3"):
        project(np.zeros((2, 4)))
    if "umap" not in projections():
        with pytest.raises(UserFacingError, match="umap-learn"):
            project(np.zeros((5, 4)), "umap")
