import random


def fmt(a, edges):
    return "%d\n%s\n" % (len(a), " ".join(map(str, a))) + "".join("%d %d\n" % e for e in edges)


def relabel(rng, n, edges):
    # keep vertex 1 as vertex 1, shuffle the others and the edge orientation/order
    perm = [0, 1] + rng.sample(range(2, n + 1), n - 1)
    out = []
    for u, v in edges:
        u, v = perm[u], perm[v]
        if rng.random() < 0.5:
            u, v = v, u
        out.append((u, v))
    rng.shuffle(out)
    return out


def tests():
    rng = random.Random(1015)
    public = [
        "5\n3 1 4 1 5\n1 2\n3 1\n3 4\n5 3\n",
        "1\n1000000000\n",
    ]
    private = [
        "2\n7 9\n2 1\n",
        fmt([10 ** 9] * 5000, relabel(rng, 5000, [(1, i) for i in range(2, 5001)])),
        fmt([rng.randint(1, 100) for _ in range(3000)],
            relabel(rng, 3000, [(rng.randint(1, i - 1), i) for i in range(2, 3001)])),
    ]
    n = 9000
    # a path starting at the root: the deepest possible tree
    path = relabel(rng, n, [(i, i + 1) for i in range(1, n)])
    # caterpillar: a long spine with short legs
    cat = []
    for i in range(2, 6001):
        cat.append((i - 1, i) if i <= 4000 else (rng.randint(1, 4000), i))
    generated = [
        fmt([rng.randint(10 ** 8, 10 ** 9) for _ in range(n)], path),
        fmt([rng.randint(1, 10 ** 9) for _ in range(8000)],
            relabel(rng, 8000, [(rng.randint(1, i - 1), i) for i in range(2, 8001)])),
        fmt([rng.randint(1, 10 ** 6) for _ in range(6000)], relabel(rng, 6000, cat)),
    ]
    return {"public": public, "private": private, "generated": generated}
