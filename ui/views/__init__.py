"""One view module per page: layout only; the numbers come from evaluation/ and explainers/."""
