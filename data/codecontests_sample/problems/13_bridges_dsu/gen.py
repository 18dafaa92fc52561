import random


def fmt(n, ops):
    return "%d %d\n" % (n, len(ops)) + "".join("%s %d %d\n" % op for op in ops)


def random_ops(rng, n, q, p_union):
    ops = []
    for _ in range(q):
        c = "+" if rng.random() < p_union else "?"
        ops.append((c, rng.randint(1, n), rng.randint(1, n)))
    return ops


def tests():
    rng = random.Random(1013)
    public = [
        "5 6\n? 1 2\n+ 1 2\n+ 3 4\n? 2 1\n+ 2 3\n? 1 4\n",
        "4 5\n? 3 3\n+ 1 2\n+ 2 1\n? 1 3\n? 4 4\n",
    ]
    private = [
        "1 2\n? 1 1\n+ 1 1\n",
        fmt(300, random_ops(rng, 300, 400, 0.3)),
        # a long chain joined from both ends, queried in between
        fmt(2000, [op for i in range(1, 1000) for op in (("+", i, i + 1), ("+", 2001 - i, 2000 - i), ("?", 1, 2000))]),
    ]
    generated = [
        fmt(20000, random_ops(rng, 20000, 13000, 0.5)),
        fmt(20000, random_ops(rng, 20000, 12000, 0.05)),
        # a giant component appears early, then many questions
        fmt(10000, random_ops(rng, 10000, 7000, 0.95) + random_ops(rng, 10000, 6500, 0.1)),
    ]
    return {"public": public, "private": private, "generated": generated}
