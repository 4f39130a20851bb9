"""Agreement between explanations: the shape measures and rank / cosine agreement of one input (`measures.py`),
agreement between methods over a dataset as a pairwise evaluator (`dataset.py`)."""
