import random


def fmt(rows):
    return "%d %d\n%s\n" % (len(rows), len(rows[0]), "\n".join(rows))


def random_garden(rng, n, m, p):
    g = [["#" if rng.random() < p else "." for _ in range(m)] for _ in range(n)]
    g[0][0] = g[n - 1][m - 1] = "."
    return ["".join(r) for r in g]


def tests():
    rng = random.Random(1020)
    public = [
        "3 3\n...\n.#.\n...\n",
        "2 2\n.#\n#.\n",
    ]
    private = [
        "1 1\n.\n",
        "3 3\n#..\n...\n...\n",
        "3 4\n....\n....\n...#\n",
        fmt(["." * 20] * 20),
    ]
    generated = [
        fmt(random_garden(rng, 400, 400, 0.1)),
        fmt(random_garden(rng, 250, 300, 0.02)),
        fmt(random_garden(rng, 2, 1000, 0.05)),
    ]
    return {"public": public, "private": private, "generated": generated}
