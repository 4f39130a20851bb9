"""Evaluation: metrics with metadata, curves, random baselines, statistics, sanity checks, ROAR, plausibility,
the job runner (local or Ray) and the result store. Imports no Streamlit."""
