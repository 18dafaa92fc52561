import random


def fmt(times, edges):
    return "%d %d\n%s\n" % (len(times), len(edges), " ".join(map(str, times))) + \
        "".join("%d %d\n" % e for e in edges)


def deep_dag(rng, n, m, span, tmax):
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    edges = [(perm[i], perm[i + 1]) for i in range(n - 1)]
    while len(edges) < m:
        i = rng.randrange(n - 1)
        j = rng.randint(i + 1, min(n - 1, i + span))
        edges.append((perm[i], perm[j]))
    rng.shuffle(edges)
    return fmt([rng.randint(1, tmax) for _ in range(n)], edges)


def wide_dag(rng, n, m, tmax, add_cycle=False):
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    edges = []
    for _ in range(m):
        i, j = sorted(rng.sample(range(n), 2))
        edges.append((perm[i], perm[j]))
    if add_cycle:
        # close a cycle through three tasks somewhere in the middle
        a, b, c = perm[n // 3], perm[n // 2], perm[2 * n // 3]
        edges += [(a, b), (b, c), (c, a)]
    rng.shuffle(edges)
    return fmt([rng.randint(1, tmax) for _ in range(n)], edges)


def tests():
    rng = random.Random(1014)
    public = [
        "5 5\n3 2 4 1 5\n1 2\n1 3\n2 4\n3 4\n4 5\n",
        "3 3\n1 1 1\n1 2\n2 3\n3 1\n",
    ]
    private = [
        "1 0\n1000000000\n",
        "2 1\n5 5\n2 2\n",
        # long chain given from its end: answer does not fit into 32 bits
        fmt([10 ** 9 - i for i in range(3000)], [(i, i + 1) for i in range(2999, 0, -1)]),
    ]
    generated = [
        deep_dag(rng, 8000, 10000, 40, 10 ** 9),
        wide_dag(rng, 5000, 9000, 1000),
        wide_dag(rng, 4000, 7000, 10 ** 6, add_cycle=True),
    ]
    return {"public": public, "private": private, "generated": generated}
