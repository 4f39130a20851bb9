"""Paper 001 Fig. 3 redrawn: one line per strategy with the study's mean curve, x = features removed."""
from __future__ import annotations

from evaluation.roar.synthetic import STRATEGIES
from ui.figures.roar_synthetic import synthetic_figure


def test_one_line_per_strategy_with_its_curve():
    study = {"seeds": [0, 1], "curves": {"ground-truth": [0.9, 0.5, 0.5], "roar": [0.9, 0.9, 0.6],
                                         "recursive": [0.9, 0.5, 0.5], "worst-case": [0.9, 0.9, 0.9]}}
    figure = synthetic_figure(study, STRATEGIES)
    assert [t.name for t in figure.data] == [STRATEGIES[s] for s in study["curves"]]
    for trace, curve in zip(figure.data, study["curves"].values()):
        assert list(trace.x) == [0, 1, 2] and list(trace.y) == curve
    assert "2 problems" in figure.layout.yaxis.title.text
