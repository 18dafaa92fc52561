import random


def _fmt(m, t):
    return f"{len(t)} {m}\n" + " ".join(map(str, t)) + "\n"


def tests():
    rng = random.Random(1003)
    public = [
        "3 7\n3 2 5\n",
        "2 5\n2 2\n",
    ]
    private = [
        "1 1\n1\n",
        "1 300000\n1000000000\n",
        _fmt(200000, [rng.randint(10 ** 8, 10 ** 9) for _ in range(1000)]),
    ]
    generated = [
        _fmt(300000, [rng.randint(1, 10 ** 9) for _ in range(15000)]),
        _fmt(100000, [rng.randint(1, 100) for _ in range(20000)]),
        _fmt(5, [1] * 10),
    ]
    return {"public": public, "private": private, "generated": generated}
