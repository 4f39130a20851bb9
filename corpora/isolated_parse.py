"""A user file parsed in a worker process under a time and a memory limit: one bad file cannot freeze the server.

Parsing a big or hostile file (100k rows, a 25 MB single line, an encoding guessed from the bytes) is pure Python:
in the server's process it holds the interpreter lock for seconds and every other session waits. Here the parse
runs in a child process (``python -c WORKER``: a fresh interpreter that imports only ``corpora``, ~0.1 s;
multiprocessing's spawn and forkserver would import the server's main module in each child), which first limits
itself with ``resource.setrlimit``:

- ``RLIMIT_AS``: its address space may grow by at most ``memory_mb`` over what it had once ``corpora`` was
  imported (a file that needs more gets a message; the server's own memory never sees it);
- ``RLIMIT_CPU``: ``seconds`` of CPU (the kernel ends it with SIGXCPU past that); the parent also kills it when
  it runs ``2 x seconds + 5`` of wall-clock time (a worker starved on a busy machine).

The caller waits on a pipe (the interpreter lock released) and receives progress messages (share of the text
read, rows so far), then the examples in pieces of ``CHUNK``, or the ``DataError`` the parse raised, or learns which
limit ended it (a ``DataError`` saying what to do). It reports the worker's CPU time to ``CPU_LISTENERS`` (a job's
CPU quota). Messages never quote the file's content (``corpora/user_file.py``).
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from corpora.objects import is_parquet, user_file_examples
from corpora.records import DataError, Example

Progress = Callable[[float, int], None]  # (share of the file read, rows so far)
# called with each worker's CPU seconds (user + system, from its rusage) once it has ended, in the caller's thread:
# the job queue charges them to the job that asked (evaluation/runs/scheduler.py, registered there)
CPU_LISTENERS: list[Callable[[float], None]] = []
ROOT = Path(__file__).resolve().parents[1]
# examples per message: unpickling one holds the caller's interpreter lock ~10 ms, so other sessions' threads get
# their turn between messages (all 100k at once held it for over a second: bench/upload_memory.py --responsiveness)
CHUNK = 1000
WORKER = "from corpora.isolated_parse import main; main()"  # run from ROOT; not -m, which imports the module twice


def _address_space() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))


def _limit_self(seconds: float, memory_mb: float) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (max(1, int(seconds + 0.999)), max(1, int(seconds + 0.999)) + 1))
    try:
        start = _address_space()
    except (OSError, StopIteration):  # no /proc (not Linux): the CPU limit and the parent's deadline still hold
        return
    limit = start + int(memory_mb * 1_000_000)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _child(conn: Connection, path: str, label_names, max_rows: int, seconds: float, memory_mb: float,
           columns: dict[str, str] | None = None) -> None:
    try:
        if is_parquet(path):  # the parquet reader's own import is no part of the file's memory budget
            import pandas  # noqa: F401
            import pyarrow.parquet  # noqa: F401  (lazy third-party import: only a parquet upload needs it)
        _limit_self(seconds, memory_mb)
        examples = user_file_examples(path, label_names=label_names, max_rows=max_rows, columns=columns,
                                      progress=lambda share, rows: conn.send(("progress", share, rows)))
        for start in range(0, len(examples), CHUNK):  # in pieces: the caller never unpickles all at once
            conn.send(("examples", examples[start:start + CHUNK]))
        conn.send(("done", None))
    except DataError as error:
        conn.send(("error", str(error)))
    except MemoryError:
        conn.send(("memory", None))
    finally:
        conn.close()


def main() -> None:
    """The worker: ``python -c WORKER FD JSON``; answers on the pipe's writing end FD."""
    fd, spec = int(sys.argv[1]), json.loads(sys.argv[2])
    labels = tuple(spec["labels"]) if spec["labels"] is not None else None
    _child(Connection(fd, readable=False), spec["path"], labels, spec["max_rows"], spec["seconds"], spec["memory_mb"],
           spec.get("columns"))


def _limit_message(name: str, what: str, seconds: float, memory_mb: float) -> str:
    if what == "memory":
        return (f"{name}: reading it needs more than the {memory_mb:g} MB this server gives one file "
                f"(EXWB_PARSE_MB). Keep fewer rows or shorter texts (a very long line is one huge example), or split "
                f"the file.")
    return (f"{name}: reading it took longer than the {seconds:g} s this server gives one file (EXWB_PARSE_SECONDS). "
            f"Keep fewer rows or shorter texts, save it as UTF-8, or split the file.")


def parse_in_worker(path: str | Path, label_names: tuple[str, ...] | None, max_rows: int, seconds: float,
                    memory_mb: float, progress: Progress | None = None,
                    columns: dict[str, str] | None = None) -> list[Example]:
    """``load_user_file(path, label_names, max_rows)`` run in a worker process within the limits (module doc)."""
    name = Path(path).name
    read_end, write_end = os.pipe()
    spec = {"path": str(Path(path).resolve()), "labels": list(label_names) if label_names is not None else None,
            "max_rows": max_rows, "seconds": seconds, "memory_mb": memory_mb,
            "columns": columns or None}
    try:
        worker = subprocess.Popen([sys.executable, "-c", WORKER, str(write_end), json.dumps(spec)],
                                  cwd=ROOT, pass_fds=(write_end,), stdin=subprocess.DEVNULL)
    finally:
        os.close(write_end)  # the worker holds the only writing end: its exit ends every wait below
    receive = Connection(read_end, writable=False)
    deadline = time.monotonic() + 2 * seconds + 5  # the CPU limit ends it first unless the machine is saturated
    examples: list[Example] = []
    answered = False  # it said how the parse ended: let it exit by itself (else: killed at once, e.g. on a rerun)
    try:
        while True:
            if not receive.poll(min(0.25, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    raise DataError(_limit_message(name, "time", seconds, memory_mb))
                continue
            try:
                kind, *payload = receive.recv()
                answered = kind not in ("progress", "examples")
            except EOFError:  # it died without a word: a limit of the kernel's ended it
                _reap(worker)
                died_of_cpu = worker.returncode == -signal.SIGXCPU
                raise DataError(_limit_message(name, "time" if died_of_cpu else "memory", seconds, memory_mb)) \
                    from None
            except MemoryError:  # the result itself would not fit here
                raise DataError(_limit_message(name, "memory", seconds, memory_mb)) from None
            if kind == "progress":
                if progress is not None:
                    progress(*payload)
            elif kind == "examples":
                examples += payload[0]
            elif kind == "done":
                return examples
            elif kind == "memory":
                raise DataError(_limit_message(name, "memory", seconds, memory_mb))
            else:
                raise DataError(payload[0])
    finally:
        receive.close()
        _reap(worker, grace=2.0 if answered else 0.0)


def _reap(worker: subprocess.Popen, grace: float = 2.0) -> None:
    """Wait for the worker (killed if it has not exited within ``grace`` s; never a zombie) and report its CPU."""
    if worker.returncode is not None:
        return
    deadline = time.monotonic() + grace
    while True:  # wait4, not Popen.wait: its rusage is the worker's own CPU time
        pid, status, usage = os.wait4(worker.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() >= deadline:
            worker.kill()
            pid, status, usage = os.wait4(worker.pid, 0)
            break
        time.sleep(0.01)
    worker.returncode = os.waitstatus_to_exitcode(status)
    for listener in CPU_LISTENERS:
        listener(usage.ru_utime + usage.ru_stime)
