import random


def _fmt(s, a):
    return f"{len(a)} {s}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(1005)
    public = [
        "4 5\n1 2 3 4\n",
        "3 4\n5 6 7\n",
    ]
    private = [
        "1 1000000000\n1000000000\n",
        # windows of huge values: the running sum does not fit in 32 bits
        _fmt(10 ** 15, [10 ** 9] * 1000),
        _fmt(3 * 10 ** 9, [rng.randint(1, 10 ** 9) for _ in range(2000)]),
    ]
    generated = [
        _fmt(6 * 10 ** 12, [rng.randint(1, 10 ** 9) for _ in range(16000)]),
        _fmt(5000, [rng.randint(1, 10) for _ in range(20000)]),
        _fmt(5000, [1] * 5000),
    ]
    return {"public": public, "private": private, "generated": generated}
