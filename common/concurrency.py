"""The one bounded-concurrency helper: run a function over a stream of items on a thread pool."""
from __future__ import annotations

import concurrent.futures as cf
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def bounded_map(fn: Callable[[T], R], items: Iterable[T], workers: int, max_in_flight: int | None = None,
                wait_on_close: bool = True, name: str = "") -> Iterator[tuple[T, "cf.Future[R]"]]:
    """Run ``fn(item)`` on ``workers`` threads; yield ``(item, future)`` as each finishes
    (those finishing together in submission order); ``future.result()`` returns or raises.

    ``items`` is consumed lazily, at most ``max_in_flight`` (default 2 x workers) submitted and
    not yet yielded, so a streamed plan is never all in memory and an abort leaves little
    queued. Closing the iterator (break, an error) cancels what has not started; with
    ``wait_on_close`` False it does not wait for what is running (e.g. network requests)."""
    workers = max(1, workers)
    limit = max(1, max_in_flight or 2 * workers)
    pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    pending: dict[cf.Future, tuple[int, T]] = {}
    queue = iter(items)
    seq = 0
    try:
        while True:
            for item in queue if len(pending) < limit else ():
                pending[pool.submit(fn, item)] = (seq, item)
                seq += 1
                if len(pending) >= limit:
                    break
            if not pending:
                return
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: pending[f][0]):
                yield pending.pop(fut)[1], fut
    finally:
        pool.shutdown(wait=wait_on_close, cancel_futures=True)
