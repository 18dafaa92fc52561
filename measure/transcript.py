"""Reading and comparing the probe's transcripts (the protocol is in probe_cpp.py).

A candidate's transcript is never trusted on its own: each call line is compared with the line
the reference printed for the same call on the same inputs. Integers, hashes and lengths must be
equal; floats within the problem's tolerance. Lines must be exactly the expected ones: a missing,
repeated or out-of-order call, or a missing END, makes the transcript invalid (the program
printed lines of its own, or stopped early).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .probe import Tolerance

SUM_REL = 1e-6  # reordering slack of a sum of n terms, relative to the sum of |x|


@dataclass
class Call:
    index: int
    wall_s: float | None
    cpu_s: float | None
    threads: int | None
    outputs: list[str]


@dataclass
class Transcript:
    calls: list[Call] = field(default_factory=list)
    valid: int | None = None          # mode V: the suite's own verdict (1 pass, 0 fail)
    end: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def max_threads(self) -> int:
        return max((c.threads or 0 for c in self.calls), default=0)

    def times(self, clock: str) -> list[float]:
        return [c.wall_s if clock == "wall" else c.cpu_s for c in self.calls
                if (c.wall_s if clock == "wall" else c.cpu_s) is not None]


def parse_transcript(text: str, nonce: int) -> Transcript:
    tag = f"PA {nonce} "
    t = Transcript()
    seen: set[int] = set()
    for raw in (text or "").splitlines():
        at = raw.find(tag)
        if at < 0:
            continue
        line = raw[at + len(tag):]
        kind, _, rest = line.partition(" ")
        try:
            if kind == "C":
                head, _, outs = rest.partition("|")
                parts = head.split()
                index = int(parts[0])
                meta = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
                call = Call(index, _num(meta.get("w")), _num(meta.get("c")),
                            int(meta["t"]) if meta.get("t", "").isdigit() else None, outs.split())
                if index in seen or index != len(t.calls) or t.end is not None:
                    t.problems.append(f"call line {index} out of order or repeated")
                seen.add(index)
                t.calls.append(call)
            elif kind == "V":
                if t.valid is not None:
                    t.problems.append("validation line repeated")
                t.valid = int(rest.split()[0])
            elif kind == "END":
                if t.end is not None:
                    t.problems.append("END repeated")
                t.end = int(rest.split()[0])
            else:
                t.problems.append(f"unknown transcript line {line[:80]!r}")
        except (ValueError, IndexError):
            t.problems.append(f"unreadable transcript line {line[:120]!r}")
    if t.end is None:
        t.problems.append("no END line (the program stopped early or its output was cut)")
    elif t.end != len(t.calls):
        t.problems.append(f"END says {t.end} calls, {len(t.calls)} call lines")
    return t


def _num(v: str | None) -> float | None:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def _close(a: float, b: float, tol: Tolerance, scale: float = 1.0, slack: float = 0.0) -> bool:
    """Within tolerance; a NaN matches a NaN and an infinity the same infinity (a reference
    that divides by zero on a singular input defines those values too)."""
    if math.isnan(b):
        return math.isnan(a)
    if not math.isfinite(a) or not math.isfinite(b):
        return a == b
    return abs(a - b) <= tol.abs * scale + tol.rel * abs(b) + slack


def compare_token(cand: str, ref: str, tol: Tolerance) -> str | None:
    """None when ``cand`` matches ``ref``, else why not."""
    kind = ref[:2]
    if cand[:2] != kind:
        return f"output kind {cand[:2]!r} != {kind!r}"
    if kind in ("i:", "h:"):
        return None if cand == ref else f"{cand[:60]} != {ref[:60]}"
    try:
        if kind == "d:":
            a, b = float(cand[2:]), float(ref[2:])
            return None if _close(a, b, tol) else f"{a!r} != {b!r}"
        if kind == "f:":
            return _compare_reals(cand[2:], ref[2:], tol)
    except (ValueError, IndexError):
        return f"unreadable output {cand[:80]!r}"
    return f"unknown output kind {kind!r}"


def _compare_reals(cand: str, ref: str, tol: Tolerance) -> str | None:
    c_head, _, c_samples = _split_reals(cand)
    r_head, _, r_samples = _split_reals(ref)
    n_c, n_r = int(c_head[0]), int(r_head[0])
    if n_c != n_r:
        return f"{n_c} values != {n_r}"
    l1 = float(r_head[2])
    for what, a, b in (("sum", c_head[1], r_head[1]), ("sum|x|", c_head[2], r_head[2]),
                       ("projection", c_head[3], r_head[3])):
        a, b = float(a), float(b)
        if not _close(a, b, tol, n_r, slack=SUM_REL * l1 if math.isfinite(l1) else 0.0):
            return f"{what} {a!r} != {b!r}"
    cs = [s.split("=") for s in c_samples.split(",") if s]
    rs = [s.split("=") for s in r_samples.split(",") if s]
    if [i for i, _ in cs] != [i for i, _ in rs]:
        return "sampled positions differ"
    for (i, a), (_, b) in zip(cs, rs):
        if not _close(float(a), float(b), tol):
            return f"element {i}: {float(a)!r} != {float(b)!r}"
    return None


def _split_reals(text: str) -> tuple[list[str], str, str]:
    parts = text.split(":", 4)
    return parts[:4], ":", (parts[4] if len(parts) > 4 else "")


def compare_calls(cand: Transcript, ref: Transcript, tol: Tolerance) -> str | None:
    """None when every call of ``cand`` matches ``ref``'s, else the first difference."""
    if cand.problems:
        return "; ".join(cand.problems[:3])
    if len(cand.calls) != len(ref.calls):
        return f"{len(cand.calls)} calls != {len(ref.calls)}"
    for c, r in zip(cand.calls, ref.calls):
        if len(c.outputs) != len(r.outputs):
            return f"call {c.index}: {len(c.outputs)} outputs != {len(r.outputs)}"
        for k, (a, b) in enumerate(zip(c.outputs, r.outputs)):
            why = compare_token(a, b, tol)
            if why:
                return f"call {c.index} output {k}: {why}"
    return None
