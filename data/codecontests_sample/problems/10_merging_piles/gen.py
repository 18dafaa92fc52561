import random


def _fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(1010)
    public = [
        "3\n1 2 3\n",
        "4\n5 2 4 7\n",
    ]
    private = [
        "1\n1000000000\n",
        _fmt([10 ** 9] * 2000),
        _fmt([rng.randint(1, 1000) for _ in range(1000)]),
    ]
    generated = [
        _fmt([rng.randint(1, 10 ** 6) for _ in range(20000)]),
        _fmt([rng.randint(1, 10) for _ in range(5000)]),
        "2\n1 1000000000\n",
    ]
    return {"public": public, "private": private, "generated": generated}
