import random


def _fmt(a, qs):
    out = [f"{len(a)} {len(qs)}", " ".join(map(str, a))]
    out.extend(f"{l} {r}" for l, r in qs)
    return "\n".join(out) + "\n"


def _queries(rng, n, q, long_ranges=False):
    qs = []
    for _ in range(q):
        if long_ranges:
            l = rng.randint(1, n // 4)
            r = rng.randint(3 * n // 4, n)
        else:
            l = rng.randint(1, n)
            r = rng.randint(l, n)
        qs.append((l, r))
    return qs


def tests():
    rng = random.Random(1004)
    public = [
        "5 3\n1 2 3 4 5\n1 5\n2 4\n3 3\n",
        "4 2\n-5 10 -3 7\n1 2\n2 4\n",
    ]
    private = [
        "1 1\n-1000000000\n1 1\n",
        # every element is the maximum: sums far beyond 32 bits
        _fmt([10 ** 9] * 3000, [(1, 3000), (1, 1), (2, 2999), (1500, 3000)] + _queries(rng, 3000, 500)),
        _fmt([rng.randint(-10 ** 9, 10 ** 9) for _ in range(1000)], _queries(rng, 1000, 1000)),
    ]
    n = q = 8000
    generated = [
        _fmt([rng.randint(-10 ** 9, 10 ** 9) for _ in range(n)], _queries(rng, n, q, long_ranges=True)),
        _fmt([rng.randint(0, 9) for _ in range(10000)], _queries(rng, 10000, 3000)),
        _fmt([rng.randint(-10, 10) for _ in range(10)], [(l, r) for l in range(1, 11) for r in range(l, 11)]),
    ]
    return {"public": public, "private": private, "generated": generated}
