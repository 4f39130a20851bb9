"""Plausibility: agreement of explanations with human rationales (formulas, evaluator, dataset runs)."""
