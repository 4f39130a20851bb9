"""Whether a run the store calls "running" (or "queued") still has a process working on it.

A run records the process that works on it (its pid and that process's start time, so a reused pid is not
taken for it) whenever it is marked running or queued. A reader shows such a run as "interrupted" when that
process is gone: the app restarted, a worker or a command-line run was killed. The start time is field 22 of
/proc/<pid>/stat (clock ticks since boot; psutil is not a dependency); where /proc is missing, a live pid is
trusted.
"""
from __future__ import annotations

import os
from pathlib import Path

ACTIVE = ("running", "queued")
INTERRUPTED = "interrupted"
_own: dict[int, dict] = {}  # pid -> identity of this process (cached; a forked child has another pid)


def _start_ticks(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'
    return int(text[text.rindex(")") + 2:].split()[19])


def this_process() -> dict:
    """{'pid', 'started'} of this process, recorded in a run's meta."""
    pid = os.getpid()
    if pid not in _own:
        _own[pid] = {"pid": pid, "started": _start_ticks(pid)}
    return _own[pid]


def process_alive(identity: dict | None) -> bool:
    if not identity or not isinstance(identity.get("pid"), int):
        return False
    pid = identity["pid"]
    if pid == os.getpid():
        return identity.get("started") == this_process()["started"]
    if Path("/proc").is_dir():
        started = _start_ticks(pid)
        return started is not None and (identity.get("started") is None or started == identity["started"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def shown_status(status: str, meta: dict) -> str:
    """The status to show: an active status whose process is gone (or was never recorded) is 'interrupted'."""
    if status in ACTIVE and not process_alive(meta.get("process")):
        return INTERRUPTED
    return status
