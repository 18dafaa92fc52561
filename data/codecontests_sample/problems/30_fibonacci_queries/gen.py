import random


def fmt(ns):
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


def tests():
    rng = random.Random(2030)
    public = [
        fmt([0, 1, 2, 10]),
        fmt([50, 1000000000000000000]),
    ]
    private = [
        fmt([1]),
        fmt(list(range(0, 60))),  # small n
        fmt([2 * 10 ** 9 + 16, 10 ** 18 - 1, 123456789012345678]),  # beyond 32-bit and close to the limit
    ]
    generated = [
        fmt([rng.randint(0, 10 ** 6) for _ in range(2000)]),
        fmt([rng.randint(0, 10 ** 18) for _ in range(2000)]),
        # largest: many huge n
        fmt([rng.randint(10 ** 17, 10 ** 18) for _ in range(4000)]),
    ]
    return {"public": public, "private": private, "generated": generated}
