from __future__ import annotations

from .base import Backend, BackendUnavailable
from .bwrap import BwrapBackend
from .docker import DockerBackend
from .local import LocalUnsafeBackend

BACKENDS: dict[str, type[Backend]] = {
    "bwrap": BwrapBackend,
    "docker": DockerBackend,
    "local-unsafe": LocalUnsafeBackend,
}
# Auto-detection order: isolating backends only; local-unsafe must be chosen explicitly.
_AUTO_ORDER = ("bwrap", "docker")


def available_backends() -> dict[str, str | None]:
    """name -> None if usable here, else the reason it is not."""
    out: dict[str, str | None] = {}
    for name, cls in BACKENDS.items():
        try:
            cls.check()
            out[name] = None
        except BackendUnavailable as e:
            out[name] = str(e)
    return out


def detect_backend() -> str:
    reasons = []
    for name in _AUTO_ORDER:
        try:
            BACKENDS[name].check()
            return name
        except BackendUnavailable as e:
            reasons.append(f"  - {name}: {e}")
    raise BackendUnavailable(
        "no isolating sandbox backend works on this host:\n" + "\n".join(reasons)
        + "\nInstall bubblewrap (apt-get install bubblewrap) or start a Docker engine; "
        "or pass --backend local-unsafe to run WITHOUT isolation."
    )


def make_backend(name: str) -> Backend:
    if name == "auto":
        name = detect_backend()
    try:
        cls = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown sandbox backend {name!r}; choose from auto, {', '.join(BACKENDS)}") from None
    cls.check()
    return cls()
