import random


def fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(2028)
    public = [
        fmt([7, 3, 7, 7, 100, 3]),
        fmt([1000000000, 1, 999999999]),
    ]
    private = [
        fmt([5]),  # a single visitor
        fmt([42] * 10),  # the same visitor again and again
        fmt(list(range(1, 31))),  # all different
        fmt([rng.randint(1, 20) for _ in range(300)]),
    ]
    generated = [
        # large identifiers, few repeats
        fmt([rng.randint(1, 10 ** 9) for _ in range(15000)]),
        # a handful of regulars
        fmt([rng.choice([11, 222, 3333, 44444, 555555]) for _ in range(20000)]),
    ]
    # largest: 30 000 visits drawn from a pool of 6 000 identifiers
    pool = rng.sample(range(10000, 100000), 6000)
    generated.append(fmt([rng.choice(pool) for _ in range(30000)]))
    return {"public": public, "private": private, "generated": generated}
