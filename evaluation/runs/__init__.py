"""Metric-agnostic dataset runs: the result store (SQLite), job cells run locally or on Ray, the dataset runner."""
