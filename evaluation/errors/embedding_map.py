"""The embedding map (LIT's projector): a dataset's sentence representations in two dimensions.

A sentence's representation is the last hidden state at the token the head reads (``classifier.pooled_index``:
[CLS] for encoders, the pooled last token for decoders, the decoder state at the last </s> for encoder-decoders), so
the map shows what the classifier's head sees. Vectors are computed in batches of similar length (right-padded: the
pooled token's state does not depend on padding after it, nor, under the attention mask, on padding at all) and each
finished chunk is stored at once in the result store, keyed like the predictions table by the model's fingerprint and
the dataset's content hash: the map reopens without a forward pass, and a stopped computation resumes.

Projection: PCA (scikit-learn, the default: deterministic, and its axes are the directions of largest variance), or
UMAP where the optional package ``umap-learn`` is installed (not a requirement of this project).
"""
from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from corpora import Example
from evaluation.errors.predictions import dataset_hash, fill_chunks
from evaluation.runs.store import ResultStore, run_id_for
from models import TextClassifier, UserFacingError
from models.metering import count

KIND = "embeddings"
CHUNK = 64  # examples per stored cell
PCA, UMAP = "pca", "umap"
REPRESENTATION = "last hidden state at the token the head reads (classifier.pooled_index)"

Progress = Callable[[int, int], None]


def projections() -> tuple[str, ...]:
    """The projections this installation offers: PCA always, UMAP only with ``umap-learn`` installed."""
    return (PCA, UMAP) if importlib.util.find_spec("umap") is not None else (PCA,)


@dataclass(frozen=True)
class EmbeddingMap:
    vectors: np.ndarray  # (n, hidden): one representation per example, dataset order
    run_id: str
    computed: int  # examples embedded by this call (0: all read from the store)
    seconds: float


def run_config(classifier: TextClassifier, examples: list[Example]) -> dict:
    return {"model_fingerprint": classifier.fingerprint, "dataset_hash": dataset_hash(examples),
            "representation": REPRESENTATION}


def stored_map(store: ResultStore, classifier: TextClassifier, examples: list[Example]) -> bool:
    """Whether the vectors of this model on this dataset are stored in full."""
    run = store.get_run(run_id_for(KIND, run_config(classifier, examples)))
    return run is not None and run["status"] == "done"


@torch.inference_mode()
def pooled_vectors(classifier: TextClassifier, encodings: list) -> np.ndarray:
    """The representation of each encoding (one padded forward pass for all of them, hidden states kept)."""
    ids = [list(e.input_ids) for e in encodings]
    width = max(len(row) for row in ids)
    pad = classifier.tokenizer.pad_token_id if classifier.tokenizer.pad_token_id is not None else 0
    input_ids = torch.tensor([row + [pad] * (width - len(row)) for row in ids], device=classifier.device)
    mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in ids], device=classifier.device)
    kwargs = {"input_ids": input_ids, "attention_mask": mask, "output_hidden_states": True}
    if classifier.summary_token != "eos" and encodings[0].token_type_ids is not None \
            and getattr(classifier, "_uses_token_types", False):
        kwargs["token_type_ids"] = torch.tensor([list(e.token_type_ids) + [0] * (width - len(e.token_type_ids))
                                                 for e in encodings], device=classifier.device)
    outputs = classifier.model(**kwargs)
    hidden = outputs.decoder_hidden_states[-1] if getattr(outputs, "decoder_hidden_states", None) is not None \
        else outputs.hidden_states[-1]
    count(forward=len(encodings), batches=1)
    rows = torch.arange(len(encodings), device=hidden.device)
    index = torch.tensor([classifier.pooled_index(e) for e in encodings], device=hidden.device)
    return hidden[rows, index].float().cpu().numpy()


def embed_dataset(classifier: TextClassifier, examples: list[Example], store: ResultStore | None = None,
                  progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> EmbeddingMap:
    """Every example's representation; stored chunks are read, the rest computed (sorted by length) and stored."""
    started = time.perf_counter()
    if not examples:
        raise UserFacingError("The dataset has no examples to map; pick another dataset or split.")
    store = store or ResultStore()
    run_id = store.create_run(KIND, run_config(classifier, examples), total=len(examples),
                              title=f"embedding map of {classifier.name} ({len(examples)} examples)")
    cells = store.cells(run_id)

    def vectors_of(chunk: list[int], batch: list) -> list[dict]:
        vectors = pooled_vectors(classifier, batch)
        return [{"index": i, "vector": [float(v) for v in row]} for i, row in zip(chunk, vectors)]

    computed = fill_chunks(store, run_id, cells, len(examples),
                           lambda: [classifier.encode(e.text, e.pair) for e in examples], vectors_of, "examples",
                           size=CHUNK, progress=progress, should_stop=should_stop)
    rows = {row["index"]: row["vector"] for cell in cells.values() for row in cell["rows"]}
    vectors = np.array([rows[i] for i in range(len(examples))], dtype=np.float64)
    return EmbeddingMap(vectors, run_id, computed, time.perf_counter() - started)


def project(vectors: np.ndarray, method: str = PCA, seed: int = 0) -> tuple[np.ndarray, dict]:
    """(n, 2) coordinates and what the projection says about itself (PCA: the variance share of each axis)."""
    if method not in projections():
        raise UserFacingError(f"Projection '{method}' is not available here; use one of {', '.join(projections())} "
                              f"(UMAP needs the optional package umap-learn).")
    if len(vectors) < 3:
        raise UserFacingError("A map needs at least 3 examples; pick a larger dataset or a higher limit.")
    if method == PCA:
        from sklearn.decomposition import PCA as SkPCA

        pca = SkPCA(n_components=2, random_state=seed).fit(vectors)
        return pca.transform(vectors), {"projection": PCA,
                                        "explained_variance_ratio": [float(r) for r in pca.explained_variance_ratio_]}
    import umap  # optional: only offered where installed

    reducer = umap.UMAP(n_components=2, random_state=seed, n_neighbors=min(15, len(vectors) - 1))
    return reducer.fit_transform(vectors), {"projection": UMAP, "seed": seed}
