import random


def _fmt(segs):
    return f"{len(segs)}\n" + "".join(f"{l} {r}\n" for l, r in segs)


def _random(rng, n, maxc, maxlen):
    segs = []
    for _ in range(n):
        l = rng.randint(0, maxc - 1)
        r = min(maxc, l + rng.randint(1, maxlen))
        segs.append((l, r))
    return segs


def tests():
    rng = random.Random(1002)
    public = [
        "3\n0 30\n5 10\n15 20\n",
        "4\n1 3\n3 5\n5 7\n2 4\n",
    ]
    private = [
        "1\n0 1000000000\n",
        # a chain of meetings that only touch: one room is enough
        _fmt([(i, i + 1) for i in range(0, 2000)]),
        # all meetings share one moment
        _fmt([(rng.randint(0, 500000), rng.randint(500001, 10 ** 9)) for _ in range(1500)]),
    ]
    generated = [
        _fmt(_random(rng, 11000, 10 ** 6, 2000)),
        _fmt(_random(rng, 4000, 10 ** 9, 10 ** 7)),
        _fmt(_random(rng, 3000, 100, 5)),
    ]
    return {"public": public, "private": private, "generated": generated}
