import random


def fmt(n, edges):
    lines = ["%d %d" % (n, len(edges))]
    lines += ["%d %d %d" % e for e in edges]
    return "\n".join(lines) + "\n"


def connected_graph(rng, n, m, wmax):
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    perm.remove(1)
    perm.insert(0, 1)
    edges = []
    for i in range(1, n):
        # attach to one of the few previous vertices: long shortest paths
        j = rng.randint(max(0, i - 5), i - 1)
        edges.append((perm[i], perm[j], rng.randint(1, wmax)))
    while len(edges) < m:
        u = rng.randint(1, n)
        v = rng.randint(1, n)
        edges.append((u, v, rng.randint(1, wmax)))
    rng.shuffle(edges)
    return edges


def tests():
    rng = random.Random(1012)
    public = [
        "4 5\n1 2 4\n1 3 1\n3 2 2\n2 4 5\n3 4 9\n",
        "5 3\n1 2 1000000000\n2 3 1000000000\n4 5 1\n",
    ]
    private = [
        "2 1\n2 1 7\n",
        # self-loop and parallel edges
        "3 4\n1 1 5\n1 2 10\n1 2 3\n2 3 3\n",
        fmt(3000, [(i, i + 1, 1000000000 - rng.randint(0, 5)) for i in range(1, 3000)]),
    ]
    generated = [
        fmt(7000, connected_graph(rng, 7000, 9300, 10 ** 9)),
        fmt(400, [(rng.randint(1, 400), rng.randint(1, 400), rng.randint(1, 3)) for _ in range(6000)]),
        fmt(2000, [(rng.randint(1, 2000), rng.randint(1, 2000), rng.randint(1, 10 ** 9)) for _ in range(1500)]),
    ]
    return {"public": public, "private": private, "generated": generated}
