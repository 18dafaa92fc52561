"""Isolation backends. Each launches the in-sandbox runner with a set of mounts."""
from .base import Backend, BackendUnavailable, Mount, Slot
from .registry import BACKENDS, available_backends, detect_backend, make_backend

__all__ = [
    "Backend", "BackendUnavailable", "Mount", "Slot",
    "BACKENDS", "available_backends", "detect_backend", "make_backend",
]
