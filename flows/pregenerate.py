"""The evaluation's generations made while align trains. The trainers run two at a time, but one
of each pair ends early (the reward model before SFT, DPA before RLPF) and leaves a core idle:
here each model is generated as soon as it is final (the base model at once, a stage's model when
its metrics.json is written), one at a time in a child process at a low CPU priority (it fills the
idle core and takes little from the trainers), into the evaluation's generation cache, keyed by
the model's files, the prompts and the sampling settings. The evaluate stage, in its turn, finds
them made and samples only the rest; the run state is untouched (a cache, not a stage)."""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger("perfalign.pipeline")

NICENESS = 10  # the trainers keep ~95% of a core they share with it
POLL_S = 1.0


class Pregeneration:
    """Generate ``base`` (a model directory, or None) at once, then each stage's model under
    ``align_dir`` (``stages``: stage directory -> label) once its metrics.json is newer than
    ``since`` (or exists, when ``since`` is None: a resumed run keeps finished stages).
    ``make_config``: the evaluation's config for a list of models."""

    def __init__(self, make_config: Callable[[list], object], base: str | None, align_dir: Path,
                 stages: dict[str, str], since: float | None) -> None:
        self._make_config, self._base, self._dir = make_config, base, align_dir
        self._stages, self._since = dict(stages), since
        self._stop = threading.Event()
        self.generated: dict[str, float] = {}  # label -> seconds
        self._thread = threading.Thread(target=self._run, name="pregenerate", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Start no more models and end the one in progress (at its low priority on a busy machine
        it could take long: the evaluate stage generates it at the normal one)."""
        self._stop.set()
        self._thread.join(30)
        if self.generated:
            log.info("generated beside align: %s", ", ".join(f"{k} {v:.0f} s" for k, v in self.generated.items()))

    def _ready(self) -> tuple[str, str] | None:
        """(label, model directory) of the next finished model not generated yet."""
        if self._base is not None:
            base, self._base = self._base, None
            return "base", base
        for stage, label in list(self._stages.items()):
            metrics = self._dir / stage / "metrics.json"
            if metrics.is_file() and (self._since is None or metrics.stat().st_mtime > self._since):
                del self._stages[stage]
                return label, str(self._dir / stage)
        return None

    def _generate(self, spec, config) -> float:
        from perfalign.common.child_process import call_in_child
        from perfalign.evaluation.evaluate import pregenerate

        return call_in_child(pregenerate, spec, config, NICENESS, stop=self._stop)

    def _run(self) -> None:
        from perfalign.evaluation.config import ModelSpec

        while not self._stop.is_set():
            ready = self._ready()
            if ready is None:
                if not self._stages:
                    return
                self._stop.wait(POLL_S)
                continue
            label, ref = ready
            if not Path(ref, "config.json").is_file():  # a Hub name: nothing to key a cache by
                continue
            spec = ModelSpec(label, ref)
            try:
                self.generated[label] = self._generate(spec, self._make_config([spec]))
            except Exception as e:  # noqa: BLE001 - the evaluate stage generates it and reports its error
                if self._stop.is_set():
                    return
                log.warning("generating %s beside align failed (%s: %s); the evaluate stage generates it",
                            label, type(e).__name__, e)
