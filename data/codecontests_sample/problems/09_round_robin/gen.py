import random


def _fmt(q, b):
    return f"{len(b)} {q}\n" + " ".join(map(str, b)) + "\n"


def tests():
    rng = random.Random(1009)
    public = [
        "3 2\n5 1 3\n",
        "4 10\n10 20 5 10\n",
    ]
    private = [
        "1 1\n100000\n",
        # the total time does not fit in 32 bits
        _fmt(10 ** 8, [rng.randint(9 * 10 ** 8, 10 ** 9) for _ in range(2000)]),
        _fmt(7, [rng.randint(1, 100) for _ in range(500)]),
    ]
    generated = [
        _fmt(10 ** 5, [rng.randint(36 * 10 ** 5, 4 * 10 ** 6) for _ in range(5000)]),
        _fmt(10 ** 9, [rng.randint(1, 10 ** 9) for _ in range(1000)]),
        _fmt(3, [rng.randint(1, 9) for _ in range(3000)]),
    ]
    return {"public": public, "private": private, "generated": generated}
