import heapq
import itertools


class Scheduler:
    """Runs callbacks in order of their due time; ties keep insertion order."""

    def __init__(self):
        self._queue = []
        self._counter = itertools.count()
        self.now = 0.0

    def call_at(self, when, callback, *args):
        heapq.heappush(self._queue, (when, next(self._counter), callback, args))

    def call_later(self, delay, callback, *args):
        self.call_at(self.now + delay, callback, *args)

    def run(self, until=float("inf")):
        while self._queue and self._queue[0][0] <= until:
            when, _, callback, args = heapq.heappop(self._queue)
            self.now = when
            callback(*args)
