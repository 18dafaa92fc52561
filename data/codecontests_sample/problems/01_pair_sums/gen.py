import random


def _fmt(n, k, a):
    return f"{n} {k}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(1001)
    public = [
        "5 6\n1 5 3 2 4\n",
        "4 10\n5 5 5 5\n",
    ]
    private = [
        "1 1000000000\n7\n",
        "2 2000000000\n1000000000 1000000000\n",
        _fmt(2000, 1000, [rng.randint(1, 1000) for _ in range(2000)]),
    ]
    generated = []
    n = 16000
    a = [rng.randint(1, 10 ** 9) for _ in range(n)]
    generated.append(_fmt(n, 10 ** 9, a))
    n = 6000
    a = [rng.randint(1, 50) for _ in range(n)]
    generated.append(_fmt(n, 50, a))
    n = 3000
    generated.append(_fmt(n, 1, [1] * n))
    return {"public": public, "private": private, "generated": generated}
