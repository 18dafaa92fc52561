import random


def fmt(W, items):
    return "%d %d\n" % (len(items), W) + "".join("%d %d\n" % it for it in items)


def tests():
    rng = random.Random(1017)
    public = [
        "3 8\n3 30\n4 50\n5 60\n",
        "3 10\n11 1000000000\n10 999999999\n1 1\n",
    ]
    private = [
        "1 1\n1 1\n",
        # taking the same item twice would be wrong
        "2 10\n3 5\n9 8\n",
        fmt(1000, [(rng.randint(1, 20), 10 ** 9 - rng.randint(0, 1000)) for _ in range(60)]),
    ]
    generated = [
        fmt(20000, [(rng.randint(100, 2000), rng.randint(10 ** 8, 10 ** 9)) for _ in range(100)]),
        fmt(12000, [(rng.randint(1, 1500), rng.randint(1, 10 ** 6)) for _ in range(80)]),
        fmt(5000, [(w, w + rng.randint(0, 3)) for w in (rng.randint(50, 500) for _ in range(90))]),
    ]
    return {"public": public, "private": private, "generated": generated}
