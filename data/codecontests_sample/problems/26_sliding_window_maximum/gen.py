import random


def fmt(k, a):
    return f"{len(a)} {k}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(2026)
    public = [
        fmt(3, [1, 3, 2, 0, 5, 3, 6, 7]),
        fmt(2, [4, 4, 2, 4, 1]),
    ]
    private = [
        fmt(1, [42]),  # n = k = 1
        fmt(1, [5, 1, 4, 2]),  # k = 1: the array itself
        fmt(6, [3, 1, 4, 1, 5, 9]),  # k = n: one window
        fmt(4, [rng.randint(0, 3) for _ in range(100)]),  # many equal values
    ]
    generated = [
        # decreasing array: the maximum leaves every window
        fmt(500, list(range(20000, 0, -1))),
        # random small values with many duplicates
        fmt(2000, [rng.randint(0, 10) for _ in range(30000)]),
        # largest: random values, wide window
        fmt(8000, [rng.randint(0, 10 ** 6) for _ in range(28000)]),
    ]
    return {"public": public, "private": private, "generated": generated}
