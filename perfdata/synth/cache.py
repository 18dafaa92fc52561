"""On-disk cache of LLM requests and responses, so a rerun or a crash never pays twice.

One JSON file per request, named by a hash of (backend, model, prompt, generation parameters),
written atomically (common.fileio): a reader sees a whole record or none.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from perfalign.common.fileio import atomic_write_json


def cache_key(backend: str, model: str, prompt: str, params: dict[str, Any]) -> str:
    blob = json.dumps({"backend": backend, "model": model, "prompt": prompt, "params": params},
                      sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        # a bad record cannot happen with atomic writes unless edited by hand: refetch
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None

    def put(self, key: str, record: dict[str, Any]) -> None:
        atomic_write_json(self._path(key), record, ensure_ascii=False, indent=1, default=str)
