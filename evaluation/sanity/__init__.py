"""Sanity checks: similarity of explanations under model randomization, for one input and over a dataset."""
