import random


def _fmt(qs):
    return f"{len(qs)}\n" + "".join(f"{l} {r}\n" for l, r in qs)


def _rand(rng, q, lo, hi, maxlen=None):
    qs = []
    for _ in range(q):
        l = rng.randint(lo, hi)
        r = rng.randint(l, hi if maxlen is None else min(hi, l + maxlen))
        qs.append((l, r))
    return qs


def tests():
    rng = random.Random(1006)
    public = [
        "3\n1 10\n11 20\n5 5\n",
        "2\n14 16\n2 3\n",
    ]
    private = [
        "1\n1 1\n",
        "4\n1 1000000\n999983 1000000\n1 2\n2 2\n",
        _fmt(_rand(rng, 2000, 1, 10 ** 5)),
    ]
    generated = [
        _fmt(_rand(rng, 10000, 1, 10 ** 6)),
        _fmt(_rand(rng, 5000, 1, 100)),
        _fmt(_rand(rng, 3000, 900000, 10 ** 6, maxlen=1000)),
    ]
    return {"public": public, "private": private, "generated": generated}
