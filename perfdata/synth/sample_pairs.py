"""The bundled, hand-written sample of fast/slow pairs (data/synth_sample), used when no API key
is set. Each pair is served as the JSON a model would have answered, so it goes through the same
parsing and verification as generated pairs.

Layout: ``pairs/<NN>_<lang>_<slug>/`` with ``meta.json`` ({"language", "inputs"}),
``problem.md``, ``fast.<ext>``, ``slow.<ext>`` and ``gen.py`` (reads k, prints input k).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from perfalign.common.paths import BUNDLED_DATA, bundled

BUNDLED_SAMPLE = BUNDLED_DATA / "synth_sample"
_EXT = {"cpp": "cpp", "python3": "py"}


@dataclass(frozen=True)
class SamplePair:
    name: str
    path: Path
    language: str

    def response_text(self) -> str:
        meta = json.loads((self.path / "meta.json").read_text())
        ext = _EXT[self.language]
        return json.dumps({
            "problem": (self.path / "problem.md").read_text(),
            "language": self.language,
            "fast_solution": (self.path / f"fast.{ext}").read_text(),
            "slow_solution": (self.path / f"slow.{ext}").read_text(),
            "test_inputs": [],
            "input_generator": (self.path / "gen.py").read_text(),
            "input_count": int(meta.get("inputs", 4)),
        })


def load_sample_pairs(root: Path | None = None) -> list[SamplePair]:
    root = Path(root or bundled(BUNDLED_SAMPLE.name, "sample_dir")) / "pairs"
    if not root.is_dir():
        raise ValueError(f"sample directory {root} does not exist")
    pairs = []
    for d in sorted(p for p in root.iterdir() if (p / "meta.json").is_file()):
        lang = json.loads((d / "meta.json").read_text())["language"]
        if lang not in _EXT:
            raise ValueError(f"{d}/meta.json: language must be cpp or python3, got {lang!r}")
        pairs.append(SamplePair(d.name, d, lang))
    return pairs
