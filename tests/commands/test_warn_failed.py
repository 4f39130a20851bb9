"""The one warning a dataset command prints for failed examples (shared by `evaluate` and its accuracy drop)."""
from commands.common import warn_failed
from evaluation.runs.jobs import RunSummary


def test_warning_names_the_count_the_first_failure_and_the_rerun(capsys):
    summary = RunSummary(run_id="r1", status="done", done=3, total=5,
                         errors={"ex-2": "text is empty", "ex-4": "no label"})
    warn_failed(summary, "the table")
    err = capsys.readouterr().err
    assert err == ("warning: 2 of 5 examples failed (first, ex-2: text is empty); they are left out of the table "
                   "and rerun next time.\n")


def test_nothing_is_printed_when_every_example_ran(capsys):
    warn_failed(RunSummary(run_id="r1", status="done", done=5, total=5), "the summary")
    assert capsys.readouterr().err == ""
