"""The frames the runner writes to the host: a JSON header line, then the output bytes."""
import math
import time

try:
    from _json import encode_basestring_ascii as _quote  # what json.dumps uses for a string
except ImportError:  # pragma: no cover - CPython always has it
    def _quote(text):
        import json
        return json.dumps(text)


def _header(head):
    """A frame's header as one JSON line; its values are str, int, float, bool or None (the json
    module, with re and enum behind it, costs ~10 ms of every job's start-up)."""
    def value(v):
        if v is None or v is True or v is False:
            return {None: "null", True: "true", False: "false"}[v]
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else "null"
        return str(int(v))
    return ("{" + ",".join(_quote(k) + ":" + value(v) for k, v in head.items()) + "}\n").encode()


class _Frames:
    """Frames on their way to the host, written in batches: one write (one wake-up of the host)
    per ~10 ms of short tests instead of one per test (~90 us of a ~1.5 ms trivial test). Nothing
    waits long: what is pending goes out once a program has run 2 ms (``_wait``), so the host has
    heard of every finished test before its guard could blame one; and at 1 MB."""

    HOLD_S = 0.01
    IDLE_S = 0.002
    MAX_BYTES = 1 << 20

    def __init__(self, stream):
        self.stream, self.parts, self.size, self.since = stream, [], 0, time.monotonic()

    def add(self, data):
        self.parts.append(data)
        self.size += len(data)
        if self.size >= self.MAX_BYTES or time.monotonic() - self.since >= self.HOLD_S:
            self.flush()

    def flush(self):
        if self.parts:
            self.stream.write(b"".join(self.parts))
            self.stream.flush()
            self.parts, self.size = [], 0
        self.since = time.monotonic()
