"""One process at a time on a shared resource of the cache (a model being built, an artifact being written): two
users pressing Build on a shared server, or the CLI beside the app, must not write the same folder at once."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on POSIX: no lock, as before (one process per cache is the user's to keep)
    fcntl = None  # type: ignore[assignment]  # the module is absent there


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) across processes and threads of this machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:  # each call its own open file: flock then excludes threads of one process too
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
