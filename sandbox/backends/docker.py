"""docker: one fresh container per launch (the docker SDK), the runner as the container's PID 1.

The same guarantees as the bwrap backend, in Docker's terms:
- the runner is PID 1 of the container's pid namespace (signals from inside are not delivered
  to it; it makes itself non-dumpable) and receives its job on stdin, which the program cannot
  reach: nothing of the job (input file names, limits) is on a file the program could read;
- CPU time from the container's own cgroup counter (private cgroup namespace: the runner reads
  it at the cgroup root), OOM kills from the container's own memory cgroup;
- memory, pids and cpuset limits of the container = the slot's (sandbox.cgroups sets them per
  job on the host; read back here); without host cgroups, caps from the job's rlimits, which
  the runner then enforces as hard limits, as bwrap does without cgroups;
- the seccomp policy of sandbox/seccomp.py as a profile (default deny, the same allowlist and
  argument checks, no new namespaces through clone's flags, foreign ABIs refused);
- read-only root, size-capped tmpfs /tmp and /dev/shm, no network, no capabilities,
  no-new-privileges, a per-slot unprivileged uid, an environment holding only GUEST_ENV;
- files come in as bind mounts (read-only unless writable): the engine must be on this host.
"""
from __future__ import annotations

import contextlib
import functools
import json
import marshal
import os
import socket
import struct
import threading
from pathlib import Path

from .. import seccomp
from .base import Backend, BackendUnavailable, Mount, RunnerHandle, Slot, runner_path
from .bwrap import GUEST_ENV

DEFAULT_IMAGE = os.environ.get("PERFALIGN_DOCKER_IMAGE", "perfalign/sandbox:latest")
DOCKERFILE = Path(__file__).resolve().parent.parent / "docker" / "Dockerfile"
_BUILD = f"docker build --network host -t {DEFAULT_IMAGE} -f {DOCKERFILE} {DOCKERFILE.parent}"
RUNNER_GUEST = "/run/perfalign/runner.py"
MB = 1024 * 1024
_ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}
_EPERM, _ENOSYS = 1, 38


def _client():
    from perfalign.common.extras import require

    docker = require("docker", "docker")  # the real SDK, lazily: hosts without it use other backends

    return docker.from_env(timeout=60)


@functools.lru_cache(maxsize=1)
def seccomp_profile() -> str:
    """Docker's JSON form of the sandbox's seccomp policy (sandbox/seccomp.py's rules(), the same
    that builds bwrap's filter): default deny (ENOSYS), the allowlist with its argument checks,
    EPERM for the denied families; only the native ABI is listed (i386 / x32 calls are refused)."""
    actions = {"allow": {"action": "SCMP_ACT_ALLOW"}, "eperm": {"action": "SCMP_ACT_ERRNO", "errnoRet": _EPERM},
               "enosys": {"action": "SCMP_ACT_ERRNO", "errnoRet": _ENOSYS}}
    grouped: dict[tuple, list[str]] = {}
    for action, name, conds in seccomp.rules():
        grouped.setdefault((action, conds), []).append(name)
    rules = []
    for (action, conds), names in grouped.items():
        rule = {"names": names, **actions[action]}
        if conds:  # (arg & value) == valueTwo for MASKED_EQ
            rule["args"] = [{"index": c[0], "value": c[2], "valueTwo": c[3] if c[1] == "masked_eq" else 0,
                             "op": "SCMP_CMP_" + c[1].upper()} for c in conds]
        rules.append(rule)
    arch = _ARCH.get(os.uname().machine)
    return json.dumps({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": _ENOSYS,
                       "architectures": [arch] if arch else [], "syscalls": rules})


class DockerBackend(Backend):
    name = "docker"
    isolated = True

    def __init__(self, image: str = DEFAULT_IMAGE) -> None:
        self.image = image
        self._api = _client().api
        self._cgroup_v2 = str(self._api.info().get("CgroupVersion", "1")) == "2"
        self._live: dict[str, RunnerHandle] = {}
        self._lock = threading.Lock()

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
            raise BackendUnavailable(f"Docker image {DEFAULT_IMAGE} not found; build it with: {_BUILD}") from None

    # The container's own cgroup, at the root of its private cgroup namespace.
    def guest_cpu_file(self, slot: Slot) -> tuple[str, str] | None:
        if self._cgroup_v2:
            return ("/sys/fs/cgroup/cpu.stat", "usec")
        return ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "ns")

    def guest_oom_file(self, slot: Slot) -> str | None:
        return "/sys/fs/cgroup/memory.events" if self._cgroup_v2 else "/sys/fs/cgroup/memory/memory.oom_control"

    def launch(self, spec: dict, mounts: list[Mount], slot: Slot) -> RunnerHandle:
        from docker.types import Mount as DockerMount

        tmp_bytes = int(spec.pop("tmp_bytes"))
        memory, pids, cpus = _limits(spec, slot)
        binds = [DockerMount(RUNNER_GUEST, str(runner_path()), type="bind", read_only=True)]
        binds += [DockerMount(m.guest, str(m.host), type="bind", read_only=not m.writable) for m in mounts]
        host_config = self._api.create_host_config(
            mounts=binds, read_only=True, network_mode="none", cap_drop=["ALL"],
            security_opt=["no-new-privileges", f"seccomp={seccomp_profile()}"],
            tmpfs={"/tmp": f"size={tmp_bytes},mode=1777,exec"}, ipc_mode="private", shm_size=tmp_bytes,
            mem_limit=memory, memswap_limit=memory, pids_limit=pids, cpuset_cpus=cpus,
            cgroupns="private", init=False, auto_remove=True,  # removed even if this process dies
        )
        container = self._api.create_container(
            self.image, ["/usr/bin/python3", "-I", "-S", RUNNER_GUEST, "-"], user=f"{slot.uid}:{slot.uid}",
            environment=dict(GUEST_ENV), working_dir="/tmp", stdin_open=True,  # + StdinOnce (detach=False)
            network_disabled=True, host_config=host_config, labels={"perfalign.sandbox": "1"},
        )["Id"]
        try:
            # Attached before start: no output can be missed. The job goes in on stdin.
            sock = self._api.attach_socket(container, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self._api.start(container)
            raw = getattr(sock, "_sock", sock)
            raw.sendall(marshal.dumps(spec, 4))  # sandbox/runner/main.py: the spec format
            raw.shutdown(socket.SHUT_WR)  # EOF on the runner's stdin (stdin_once)
        except BaseException:
            self._remove(container)
            raise
        handle = _ContainerHandle(self, container, sock)
        with self._lock:
            self._live[container] = handle
        return handle

    def _remove(self, container: str) -> None:
        with self._lock:
            self._live.pop(container, None)
        with contextlib.suppress(Exception):  # already gone
            self._api.remove_container(container, force=True)

    def close(self) -> None:
        with self._lock:
            live = list(self._live.values())
        for handle in live:
            handle.close()


def engine_status() -> dict[str, str]:
    """What `perfalign sandbox doctor` shows about the engine and the sandbox image."""
    try:
        client = _client()
        info = client.info()
    except Exception as e:
        return {"engine": f"unreachable ({type(e).__name__}) at DOCKER_HOST={os.environ.get('DOCKER_HOST', 'unset')}: "
                          "start dockerd or point DOCKER_HOST at one (the tests start a private one)"}
    out = {"engine": f"{info.get('ServerVersion')} at {os.environ.get('DOCKER_HOST', 'the default socket')}",
           "cgroups": f"v{info.get('CgroupVersion', '?')} ({info.get('CgroupDriver')})"}
    try:
        image = client.images.get(DEFAULT_IMAGE)
        out["image"] = f"{DEFAULT_IMAGE} {image.short_id} built {image.attrs.get('Created', '?')[:19]}"
    except Exception:
        out["image"] = f"{DEFAULT_IMAGE} missing: {_BUILD}"
    return out


def _limits(spec: dict, slot: Slot) -> tuple[int, int, str | None]:
    """(memory bytes, pids, cpuset) for the container: the slot cgroup's, as core set them for
    this job; without one, caps from the rlimits (the runner enforces those as hard limits)."""
    lim = spec["limits"]
    cg = slot.cgroup
    if cg is not None:
        mem_dir, pid_dir = cg.layout.memory / cg.name, cg.layout.pids / cg.name
        memory = _read_int(mem_dir / ("memory.max" if cg.layout.version == 2 else "memory.limit_in_bytes"))
        pids = _read_int(pid_dir / "pids.max")
        cpus = None
        if cg.layout.cpuset is not None:
            with contextlib.suppress(OSError):
                cpus = (cg.layout.cpuset / cg.name / "cpuset.cpus").read_text().strip() or None
        if memory and pids:
            return memory, pids, cpus
    memory = lim.get("as_bytes") or (lim.get("stack_bytes") or 2048 * MB) + 256 * MB
    return int(memory), int(lim.get("nproc", 64)) + 8, None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


class _ContainerHandle(RunnerHandle):
    """Demultiplexes the attached stream: the runner's stdout into a pipe the host polls
    (backpressure, bounded memory), its stderr into a bounded tail."""

    _ERR_TAIL = 64 * 1024

    def __init__(self, backend: DockerBackend, container: str, sock) -> None:
        self._backend, self._id, self._sock = backend, container, sock
        self._fd, self._w = os.pipe()
        self._err = bytearray()
        self._closed = False
        self._thread = threading.Thread(target=self._pump, name="docker-attach", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        raw = getattr(self._sock, "_sock", self._sock)
        try:
            while True:
                header = _recv_exact(raw, 8)
                if len(header) < 8:
                    return
                kind, size = header[0], struct.unpack(">I", header[4:])[0]
                while size:
                    chunk = raw.recv(min(size, 1 << 16))
                    if not chunk:
                        return
                    size -= len(chunk)
                    if kind == 1:
                        view = memoryview(chunk)
                        while view:
                            view = view[os.write(self._w, view):]
                    elif kind == 2:
                        self._err += chunk
                        del self._err[:-self._ERR_TAIL]
        except OSError:  # the host closed its end, or the container went away
            pass
        finally:
            os.close(self._w)

    def kill(self) -> None:
        with contextlib.suppress(Exception):  # already stopped
            self._backend._api.kill(self._id)

    def wait(self) -> int:
        self._thread.join()
        try:
            return int(self._backend._api.wait(self._id, timeout=60)["StatusCode"])
        except Exception:  # already auto-removed: the status is gone with it
            return -1

    def stderr_tail(self) -> str:
        return bytes(self._err).decode("utf-8", "replace").strip()[-2000:]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._backend._remove(self._id)  # force-remove kills whatever still runs
        with contextlib.suppress(OSError):
            self._sock.close()
        os.close(self._fd)  # a pump blocked on a full pipe gets EPIPE and ends
        self._thread.join(timeout=10)


def _recv_exact(raw, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = raw.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf
