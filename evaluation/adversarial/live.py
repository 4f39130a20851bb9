"""One attack in a background thread, so a page can show its steps live and stop it (keeping the best iterate)."""
from __future__ import annotations

import threading
import time

from evaluation.adversarial.attack import attack
from evaluation.adversarial.config import AttackConfig
from evaluation.adversarial.result import AttackResult
from models import Encoding, TextClassifier, UserFacingError


class LiveAttack:
    """``start()`` runs ``attack`` in a daemon thread; ``step``, ``objective``, ``result`` and ``error`` are read
    by the page; ``stop()`` asks the attack to end at its next step (it returns its best iterate so far)."""

    def __init__(self, classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig,
                 allow_long: bool = False):
        self.classifier, self.encoding, self.method, self.config = classifier, encoding, method, config
        self.allow_long = allow_long  # a document over documents.MAX_ATTACK_WINDOWS windows: the reader opted in
        self.key = f"{classifier.fingerprint}|{encoding.key}|{method}|{sorted(vars(config).items())}"
        self.step, self.objective, self.started = 0, float("nan"), 0.0
        self.result: AttackResult | None = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started if self.started else 0.0

    def _progress(self, step: int, total: int, objective: float) -> None:
        self.step, self.objective = step, objective

    def _run(self) -> None:
        try:
            self.result = attack(self.classifier, self.encoding, self.method, self.config, progress=self._progress,
                                 should_stop=self._stop.is_set, allow_long=self.allow_long)
        except UserFacingError as error:
            self.error = str(error)
        except Exception as error:  # noqa: BLE001  (a page shows the message instead of losing the session)
            self.error = f"The attack failed: {type(error).__name__}: {error}"

    def start(self) -> LiveAttack:
        self.started = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"attack-{self.method}")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
