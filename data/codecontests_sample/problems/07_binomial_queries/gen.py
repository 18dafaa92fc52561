import random


def _fmt(qs):
    return f"{len(qs)}\n" + "".join(f"{n} {r}\n" for n, r in qs)


def _rand(rng, q, maxn, over=0):
    qs = []
    for _ in range(q):
        n = rng.randint(0, maxn)
        qs.append((n, rng.randint(0, n + over)))
    return qs


def tests():
    rng = random.Random(1007)
    public = [
        "3\n5 2\n10 0\n7 7\n",
        "2\n100 50\n6 3\n",
    ]
    private = [
        "1\n0 0\n",
        "4\n3 5\n0 1\n200000 100000\n200000 199999\n",
        _fmt(_rand(rng, 3000, 1000, over=5)),
    ]
    generated = [
        _fmt(_rand(rng, 10000, 200000)),
        _fmt(_rand(rng, 5000, 2000, over=10)),
        _fmt(_rand(rng, 2000, 50)),
    ]
    return {"public": public, "private": private, "generated": generated}
