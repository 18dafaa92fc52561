"""docker: the docker SDK, a warm container per worker slot (network none, read-only root,
memory and pids limits, unprivileged user). Same runner, same results as bwrap."""
from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

from .base import RUNNER, Backend, BackendUnavailable, Mount, Outcome, Slot
from .bwrap import GUEST_ENV

DEFAULT_IMAGE = os.environ.get("PERFALIGN_DOCKER_IMAGE", "perfalign/sandbox:latest")
DOCKERFILE = Path(__file__).resolve().parent.parent / "docker" / "Dockerfile"


def _client():
    import docker  # the real SDK; imported lazily so hosts without it can use other backends

    return docker.from_env(timeout=30)


class DockerBackend(Backend):
    name = "docker"
    isolated = True

    def __init__(self, image: str = DEFAULT_IMAGE, memory_mb: int = 2048, pids: int = 256) -> None:
        self.image = image
        self.memory_mb = memory_mb
        self.pids = pids
        self._client = _client()
        self._containers: dict[int, object] = {}

    @classmethod
    def check(cls) -> None:
        try:
            client = _client()
            client.ping()
        except Exception as e:  # docker raises several types for "no engine"
            raise BackendUnavailable(f"no reachable Docker engine ({type(e).__name__}: {e})") from None
        try:
            client.images.get(DEFAULT_IMAGE)
        except Exception:
            raise BackendUnavailable(
                f"Docker image {DEFAULT_IMAGE} not found; build it with: "
                f"docker build -t {DEFAULT_IMAGE} -f {DOCKERFILE} {DOCKERFILE.parent}"
            ) from None

    def _container(self, slot: Slot):
        c = self._containers.get(slot.index)
        if c is None:
            c = self._client.containers.run(
                self.image, ["sleep", "infinity"], detach=True, auto_remove=True,
                network_mode="none", read_only=True, user=f"{slot.uid}:{slot.uid}",
                mem_limit=f"{self.memory_mb}m", memswap_limit=f"{self.memory_mb}m", pids_limit=self.pids,
                cap_drop=["ALL"], security_opt=["no-new-privileges"], environment=GUEST_ENV,
                tmpfs={"/tmp": "size=512m,exec,mode=1777", "/box": "size=512m,exec,mode=1777",
                       "/run": "size=16m,exec,mode=1777"},
            )
            self._containers[slot.index] = c
        return c

    def execute(self, spec: dict, mounts: list[Mount], slot: Slot, timeout: float) -> Outcome:
        spec.pop("tmp_bytes", None)
        c = self._container(slot)
        # Copy mounts in (no host binds into a shared engine), run, copy writable mounts back.
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(str(RUNNER), arcname="run/runner.py")
            data = json.dumps(spec).encode()
            info = tarfile.TarInfo("run/job.json")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
            for m in mounts:
                tar.add(str(m.host), arcname=m.guest.lstrip("/"))
        c.put_archive("/", buf.getvalue())
        try:
            res = c.exec_run(["timeout", "-s", "KILL", str(int(timeout) + 1), "python3", "-I", "-S",
                              "/run/runner.py", "/run/job.json"], demux=True)
            out, err = res.output
            for m in (m for m in mounts if m.writable):
                stream, _ = c.get_archive(m.guest)
                tar = tarfile.open(fileobj=io.BytesIO(b"".join(stream)))
                tar.extractall(m.host.parent, filter="data")
            return Outcome(res.exit_code, out or b"", err or b"")
        finally:
            c.exec_run(["sh", "-c", "rm -rf /box/* /tmp/* /run/job.json"])

    def close(self) -> None:
        for c in self._containers.values():
            try:
                c.kill()
            except Exception:
                pass
        self._containers.clear()
