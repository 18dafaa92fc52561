import random


def _fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(1008)
    public = [
        "3\n1 6 12\n",
        "2\n7 100\n",
    ]
    private = [
        "1\n1\n",
        # 720720 has 240 divisors; the total is far beyond 32 bits
        _fmt([720720] * 15000),
        _fmt([rng.randint(1, 10 ** 5) for _ in range(3000)]),
    ]
    generated = [
        _fmt([rng.randint(5 * 10 ** 5, 10 ** 6) for _ in range(20000)]),
        _fmt([rng.randint(1, 100) for _ in range(1000)]),
        _fmt([999983, 1000000, 524288, 2, 3, 999999, 1, 65536, 531441, 999961]),
    ]
    return {"public": public, "private": private, "generated": generated}
