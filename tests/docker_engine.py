"""A private Docker engine for the tests (and benchmarks): started here, stopped by its pid.

Never touches a system daemon: its own socket, pidfile and exec root in a fresh temporary
folder, its data root under the perfalign cache dir (so the images survive between CI runs),
no bridge, no iptables. The images are built without a registry: the Dockerfile's FROM is a
`debootstrap --variant=minbase bookworm` root imported under that tag, then
`docker build --network host` installs the toolchains. An exclusive lock on the data root makes
concurrent test sessions on one machine take turns instead of sharing a daemon.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from sandbox.backends.docker import DEFAULT_IMAGE, DOCKERFILE
from common.paths import cache_root

_LABEL = "perfalign.dockerfile.sha256"


class EngineUnavailable(RuntimeError):
    pass


def _from_image() -> str:
    for line in DOCKERFILE.read_text().splitlines():
        if line.strip().upper().startswith("FROM "):
            return line.split()[1]
    raise EngineUnavailable(f"{DOCKERFILE} has no FROM line")


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for a parent that does not reap."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


class PrivateEngine:
    def __init__(self, state_dir: Path | None = None, lock_timeout_s: float = 900.0) -> None:
        self.state = Path(state_dir or cache_root() / "docker")
        self.lock_timeout_s = lock_timeout_s
        self.run_dir: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.host = ""
        self._lock_fd: int | None = None
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ start / stop
    def start(self) -> "PrivateEngine":
        if os.geteuid() != 0:
            raise EngineUnavailable("the private Docker engine needs root (dockerd)")
        for tool in ("dockerd", "debootstrap"):
            if not shutil.which(tool):
                raise EngineUnavailable(f"{tool} is not installed (apt-get install docker.io debootstrap; "
                                        f"scripts/setup.sh does it)")
        self.state.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            self._stop_orphans()
            self._start_daemon()
            self.ensure_images()
        except BaseException:
            self.stop()
            raise
        return self

    def _lock(self) -> None:
        self._lock_fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.lock_timeout_s
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EngineUnavailable(f"another session holds the private engine at {self.state} "
                                            f"for more than {self.lock_timeout_s:g} s") from None
                time.sleep(1.0)

    def _stop_orphans(self) -> None:
        """Stop a dockerd left on our data root by a killed session (its flock died with it, its
        daemon did not): it would hold the data root and make this start time out. We hold the
        lock, so no live session owns such a daemon."""
        data = str(self.state / "data")
        for proc in Path("/proc").iterdir():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and Path(argv[0].decode(errors="replace")).name == "dockerd" and data.encode() in argv:
                pid = int(proc.name)
                try:
                    os.kill(pid, signal.SIGTERM)
                    deadline = time.monotonic() + 20
                    while _running(pid) and time.monotonic() < deadline:
                        time.sleep(0.2)
                    if _running(pid):
                        os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # it exited meanwhile
                    pass

    def _start_daemon(self) -> None:
        t0 = time.monotonic()
        # Short paths: a unix socket path must fit in 108 bytes.
        self.run_dir = Path(tempfile.mkdtemp(prefix="pa-dockerd-"))
        sock, pidfile = self.run_dir / "docker.sock", self.run_dir / "docker.pid"
        self.host = f"unix://{sock}"
        log = open(self.state / "dockerd.log", "w")
        self.proc = subprocess.Popen(
            ["dockerd", "--bridge=none", "--iptables=false", "--ip-masq=false", "--ip6tables=false",
             "--data-root", str(self.state / "data"), "--exec-root", str(self.run_dir / "exec"),
             "-H", self.host, "--pidfile", str(pidfile)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")})
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise EngineUnavailable(f"dockerd exited ({self.proc.returncode}): "
                                        f"{(self.state / 'dockerd.log').read_text()[-1500:]}")
            try:
                self.client().ping()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise EngineUnavailable("dockerd did not answer within 60 s: "
                                            f"{(self.state / 'dockerd.log').read_text()[-1500:]}") from None
                time.sleep(0.2)
        # Containers left by a session that was killed: everything in this data root is ours.
        client = self.client()
        for c in client.containers.list(all=True):
            c.remove(force=True)
        self.timings["dockerd_start_s"] = round(time.monotonic() - t0, 2)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)  # dockerd stops its containers and containerd
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None
        if self.run_dir is not None:
            _unmount_under(self.run_dir)  # dockerd may leave its netns mount behind
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def client(self):
        import docker

        return docker.DockerClient(base_url=self.host, timeout=600)

    # ------------------------------------------------------------------ images
    def ensure_images(self) -> None:
        import docker

        client = self.client()
        base = _from_image()
        try:
            client.images.get(base)
        except docker.errors.ImageNotFound:
            self._import_base(client, base)
        sha = hashlib.sha256(DOCKERFILE.read_bytes()).hexdigest()
        try:
            current = client.images.get(DEFAULT_IMAGE).labels.get(_LABEL)
        except docker.errors.ImageNotFound:
            current = None
        if current != sha:
            t0 = time.monotonic()
            try:
                client.images.build(path=str(DOCKERFILE.parent), dockerfile=DOCKERFILE.name, tag=DEFAULT_IMAGE,
                                    network_mode="host", rm=True, labels={_LABEL: sha})
            except docker.errors.BuildError as e:
                tail = "".join(str(x.get("stream", x)) for x in e.build_log)[-1500:]
                raise EngineUnavailable(f"docker build of {DEFAULT_IMAGE} failed: {tail}") from None
            self.timings["image_build_s"] = round(time.monotonic() - t0, 2)
            client.images.prune(filters={"dangling": True})

    def _import_base(self, client, tag: str) -> None:
        t0 = time.monotonic()
        root = Path(tempfile.mkdtemp(prefix="bookworm-", dir=self.state))
        try:
            p = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(root)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise EngineUnavailable(f"debootstrap bookworm failed: {(p.stdout + p.stderr)[-1500:]}")
            tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
            repo, _, version = tag.partition(":")
            client.api.import_image_from_stream(tar.stdout, repository=repo, tag=version or "latest")
            if tar.wait() != 0:
                raise EngineUnavailable("tar of the bookworm root failed")
        finally:
            shutil.rmtree(root, ignore_errors=True)
        self.timings["base_image_s"] = round(time.monotonic() - t0, 2)


def _unmount_under(path: Path) -> None:
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in sorted((p for p in points if p.startswith(f"{path}/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def start_engine() -> PrivateEngine:
    """Start a private engine and point the docker SDK (DOCKER_HOST) at it."""
    engine = PrivateEngine().start()
    os.environ["DOCKER_HOST"] = engine.host
    return engine
