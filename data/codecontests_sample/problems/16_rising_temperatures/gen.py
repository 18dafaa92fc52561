import random


def fmt(a):
    return "%d\n%s\n" % (len(a), " ".join(map(str, a)))


def tests():
    rng = random.Random(1016)
    public = [
        "8\n10 9 2 5 3 7 101 18\n",
        "5\n7 7 7 7 7\n",
    ]
    private = [
        "1\n1000000000\n",
        fmt(list(range(2000, 0, -1))),
        fmt([rng.randint(1, 50) for _ in range(3000)]),
    ]
    nearly = [i * 50000 + rng.randint(0, 2000000) for i in range(8000)]
    generated = [
        fmt([rng.randint(1, 10 ** 9) for _ in range(12000)]),
        fmt(nearly),
        fmt([rng.randint(1, 1000) for _ in range(8000)]),
    ]
    return {"public": public, "private": private, "generated": generated}
