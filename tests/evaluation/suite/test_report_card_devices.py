"""The report card on Ray GPUs: `report-card` has --executor / --ray-cpus / --ray-gpus like every dataset
command, and each check's study runs its cells on the executor. On a local Ray instance declaring GPUs (no GPU here):
with EXWB_DEVICE=cpu the cells run in Ray workers and give the local card's numbers; with EXWB_DEVICE=auto a cell
that asked for a GPU places its model on CUDA, which this machine refuses with the loader's message: the proof that
the study's cells went to GPU workers."""
from __future__ import annotations

import pytest
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from tolerances import float32_tolerance, torch_threads

from commands import report_card as report_card_command
from commands.common import Parser
from evaluation.runs import ray_executor
from evaluation.runs.store import ResultStore
from evaluation.suite import report_card as rc

METHODS = ["saliency", "leave_one_out"]


def test_report_card_takes_the_executor_flags():
    parser = Parser()
    report_card_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["report-card", "--executor", "ray", "--ray-gpus", "0.5", "--ray-cpus", "2"])
    assert (args.executor, args.ray_gpus, args.ray_cpus) == ("ray", 0.5, 2.0)
    assert parser.parse_args(["report-card"]).executor == "local"


@pytest.mark.slow
def test_a_cards_studies_run_on_ray_gpu_workers_with_the_local_numbers(keyword_classifier, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_rationale_csv(tmp_path / "keyword.csv", 4, seed=3)
    config = rc.CardConfig.quick(checks=("faithfulness",), limit=3)
    monkeypatch.setenv("EXWB_DEVICE", "cpu")
    threads = int(ray_executor.worker_env_vars(1.0)["EXWB_THREADS"])  # a Ray task's torch threads (num_cpus 1)
    with torch_threads(threads):  # the same float32 sums as the Ray workers: bit-identical rows
        local = rc.build_report_card(folder, data, METHODS, config=config,
                                     store=ResultStore(tmp_path / "local.sqlite"))
    ray_executor.shutdown()
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)
    try:
        ray_executor.use_resources({"num_cpus": 1, "num_gpus": 0.5})  # as --ray-gpus 0.5 does
        on_ray = rc.build_report_card(folder, data, METHODS, config=config, executor="ray",
                                      store=ResultStore(tmp_path / "ray.sqlite"))
        monkeypatch.setenv("EXWB_DEVICE", "auto")  # a GPU task places its model on its GPU: none is here
        on_gpu = rc.build_report_card(folder, data, METHODS, config=config, executor="ray",
                                      store=ResultStore(tmp_path / "gpu.sqlite"))
    finally:
        ray_executor.use_resources(None)
        ray_executor.shutdown()
    assert not local["errors"] and not on_ray["errors"], (local["errors"], on_ray["errors"])
    assert sum(on_ray["computed_cells"].values()) == 3  # computed on Ray, not reopened
    # the same numbers up to float32 rounding: the suite's process may have computed some of these explanations
    # before, in other batches or thread counts, and serves them from its caches; the Ray workers compute afresh
    numbers = ("mean", "low", "high", "reference_low", "reference_high")
    assert len(on_ray["rows"]) == len(local["rows"])
    for ray_row, local_row in zip(on_ray["rows"], local["rows"]):
        assert {k: v for k, v in ray_row.items() if k not in numbers} == \
            {k: v for k, v in local_row.items() if k not in numbers}
        for key in numbers:
            if local_row[key] is None:
                assert ray_row[key] is None, key
            else:
                assert ray_row[key] == pytest.approx(local_row[key], abs=float32_tolerance()), (key, ray_row, local_row)
    assert "CUDA is not available" in on_gpu["errors"]["faithfulness"]
