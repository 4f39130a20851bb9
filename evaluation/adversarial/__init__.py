"""Adversarial attacks on explanations (paper 003, sections 2.3 and 3.5): one input (``attack``), the three
measures (``measures``) and dataset runs with bootstrap intervals (``dataset``)."""
