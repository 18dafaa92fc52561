"""local-unsafe: plain subprocess + rlimits. NOT isolated: only when explicitly chosen."""
from __future__ import annotations

import sys
import tempfile

from .base import Backend, Mount, ProcessHandle, RunnerHandle, Slot, runner_path
from .bwrap import GUEST_ENV


class LocalUnsafeBackend(Backend):
    name = "local-unsafe"
    isolated = False
    host_paths = True

    @classmethod
    def check(cls) -> None:
        return None

    def launch(self, spec: dict, mounts: list[Mount], slot: Slot) -> RunnerHandle:
        spec.pop("tmp_bytes", None)
        # No mount namespace: rewrite guest paths to the host paths they stand for.
        table = sorted(((m.guest, str(m.host)) for m in mounts), key=lambda gm: -len(gm[0]))

        def host(p: str) -> str:
            for guest, real in table:
                if p == guest or p.startswith(guest + "/"):
                    return real + p[len(guest):]
            return p

        scratch = tempfile.TemporaryDirectory(prefix="perfalign-scratch-")
        spec["argv"] = [host(a) for a in spec["argv"]]
        spec["tests"] = [host(t) if t else t for t in spec["tests"]]
        spec["cwd"] = host(spec["cwd"]) if spec["cwd"] != "/tmp" else scratch.name
        spec["output_dir"] = scratch.name
        spec["clean_dirs"] = [scratch.name]
        spec["env"] = {**(spec.get("env") or {}), **GUEST_ENV, "HOME": scratch.name}
        return ProcessHandle([sys.executable, "-I", "-S", str(runner_path()), "-"], spec, on_close=scratch.cleanup)
