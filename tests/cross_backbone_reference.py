"""Paper 004's loss (Eq. 4-7) for a G on another backbone, worked token by token with the plain models: the reference
the cross-backbone tests compare ``CrossBackboneAML.terms`` and its fAML steps against. Differentiable in G's weights
when called with gradients on."""
from __future__ import annotations

import torch


def eq_4_to_7(classifier, aml, encoding, target: int, lambdas: tuple[float, float, float]) -> dict[str, torch.Tensor]:
    """The weighted terms for one input, y_v = F's probabilities (the predicted class is the target)."""
    y = torch.as_tensor(classifier.proba_of(encoding)[None], dtype=torch.float32)
    a, g_tokens, _ = aml.token_scores(encoding, y)
    ids = classifier.tensors(encoding)["input_ids"]
    x = classifier.word_embeddings(ids)[0].detach()
    m = classifier.word_embeddings(torch.tensor(aml.mask_id)).detach()
    kept, removed = [], []
    for t, word in enumerate(encoding.token_word_array):
        if word >= 0:  # Eq. 3 on v's tokens only
            kept.append(a[t] * x[t] + (1 - a[t]) * m)
            removed.append((1 - a[t]) * x[t] + a[t] * m)
        else:
            kept.append(x[t])
            removed.append(x[t])
    mask = classifier.tensors(encoding)["attention_mask"]
    p_kept = torch.softmax(classifier.forward_embeds(torch.stack(kept)[None], mask).double(), -1)[0]
    p_removed = torch.softmax(classifier.forward_embeds(torch.stack(removed)[None], mask).double(), -1)[0]
    lambda_p, lambda_a, lambda_inv = lambdas
    return {"prediction": lambda_p * -(y[0].double() * torch.log(p_kept)).sum(),  # Eq. 5
            "attribution": lambda_a * -torch.log(1 - g_tokens.double()).mean(),  # Eq. 7 over G's tokens of v
            "inverse": lambda_inv * -torch.log(1 - p_removed[target])}  # Eq. 6
