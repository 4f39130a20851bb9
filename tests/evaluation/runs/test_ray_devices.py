"""Devices per job on Ray: every dataset command accepts --ray-gpus; a cell that asked for GPUs runs
with its own GPU (Ray's assignment), EXWB_DEVICE=cuda and its share of the device's memory budget; a cell without
GPUs runs on the CPU. A local Ray instance declares GPUs as a resource (``num_gpus``): no GPU is needed to check
the assignment; the cells report what their worker was given."""
from __future__ import annotations

import os
import sys

import pytest

from commands.common import Parser, add_executor_flag, ray_resources, run_command
from evaluation.runs import ray_executor
from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.store import ResultStore


@pytest.fixture(autouse=True)
def no_default_resources(monkeypatch):
    monkeypatch.delenv("EXWB_DEVICE", raising=False)
    yield
    ray_executor.use_resources(None)


def parse(*flags: str):
    parser = Parser()
    add_executor_flag(parser)
    return parser.parse_args(list(flags))


def test_ray_gpus_is_a_flag_of_every_dataset_command_and_sets_the_runs_resources(monkeypatch):
    assert ray_resources(parse("--executor", "ray", "--ray-gpus", "0.5")) == {"num_cpus": 1.0, "num_gpus": 0.5}
    assert ray_resources(parse("--executor", "ray")) == {"num_cpus": 1.0}  # EXWB_DEVICE auto: the CPU
    monkeypatch.setenv("EXWB_DEVICE", "cuda")
    assert ray_resources(parse("--executor", "ray", "--ray-cpus", "2")) == {"num_cpus": 2.0, "num_gpus": 1.0}
    seen = []
    assert run_command(lambda args: seen.append(ray_executor.default_resources()), parse("--executor", "ray")) == 0
    assert seen == [{"num_cpus": 1.0, "num_gpus": 1.0}]
    assert run_command(lambda args: 0, parse("--executor", "ray", "--ray-gpus", "-1")) == 2  # a clear error


def test_every_dataset_command_with_ray_has_ray_gpus():
    import cli

    commands = cli.build_parser()._subparsers._group_actions[0].choices
    for command in ("evaluate", "sanity", "adversarial", "compare-models", "roar"):
        flags = {flag for action in commands[command]._actions for flag in action.option_strings}
        assert {"--executor", "--ray-gpus", "--ray-cpus"} <= flags, command


def report_placement(spec: dict) -> dict:
    """A cell's work: what its worker was given (runs in a Ray worker)."""
    import ray

    import settings

    return {"pid": os.getpid(), "gpus": [str(g) for g in ray.get_gpu_ids()], "device": settings.device_setting(),
            "share": settings.device_share(), "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}


@pytest.mark.slow
@pytest.mark.ray
def test_cells_get_their_own_gpu_its_share_or_the_cpu_on_a_cluster_with_gpu_resources(tmp_path):
    ray = pytest.importorskip("ray")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers do not import tests/
    ray_executor.shutdown()
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    try:
        store = ResultStore(tmp_path / "runs.sqlite")
        results = {}
        for name, resources in (("whole", {"num_cpus": 1, "num_gpus": 1}), ("half", {"num_cpus": 0.5, "num_gpus": 0.5}),
                                ("cpu", {"num_cpus": 1})):
            ray_executor.use_resources(resources)  # as --ray-gpus does: the runs name no resources themselves
            run_id = store.create_run("placement", {"name": name}, 4)
            cells = [Cell(f"cell-{i}", {"i": i}) for i in range(4)]
            summary = run_cells(store, run_id, cells, report_placement, executor="ray")
            assert summary.status == "finished", summary.errors
            results[name] = list(store.cells(run_id).values())
    finally:
        ray_executor.shutdown()
    for cell in results["whole"]:
        assert len(cell["gpus"]) == 1 and cell["gpus"][0] in ("0", "1")  # one GPU each, of the two declared
        assert cell["device"] == "cuda" and cell["share"] == 1.0 and cell["visible"] == cell["gpus"][0]
    for cell in results["half"]:
        assert len(cell["gpus"]) == 1 and cell["device"] == "cuda" and cell["share"] == 0.5  # half the budget
    for cell in results["cpu"]:
        assert cell["gpus"] == [] and cell["device"] == "cpu"  # never on a GPU it did not ask for
