"""Shared pieces of the mask-learning explainers (MaRC, paper 002; AML, paper 004): the Gaussian-kernel mask
of paper 002, overlapping segments for texts longer than the model reads, the live-progress record, and
(for AML) the attribution model G, its loss and its cached checkpoints."""
