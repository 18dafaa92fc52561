import random


def make(rng, n, q, vmax, wide):
    a = [rng.randint(0, vmax) for _ in range(n)]
    lines = [f"{n} {q}", " ".join(map(str, a))]
    for _ in range(q):
        if rng.random() < 0.5:
            lines.append(f"1 {rng.randint(1, n)} {rng.randint(0, vmax)}")
        else:
            if wide:
                l = rng.randint(1, max(1, n // 4))
                r = rng.randint(max(l, 3 * n // 4), n)
            else:
                l = rng.randint(1, n)
                r = rng.randint(l, n)
            lines.append(f"2 {l} {r}")
    return "\n".join(lines) + "\n"


def tests():
    rng = random.Random(2025)
    public = [
        "5 5\n1 2 3 4 5\n2 1 5\n1 3 10\n2 2 4\n2 3 3\n2 5 5\n",
        "3 4\n1000000000 1000000000 1000000000\n2 1 3\n1 2 0\n2 1 3\n2 2 2\n",
    ]
    private = [
        "1 3\n7\n2 1 1\n1 1 0\n2 1 1\n",  # n = 1
        make(rng, 10, 20, 9, False),
        make(rng, 200, 300, 1000000000, False),
    ]
    generated = [
        # large values: sums do not fit into 32-bit integers
        make(rng, 6000, 6000, 1000000000, False),
        # only updates except one final query over the whole array
        "\n".join(["20000 5001", " ".join(["0"] * 20000)]
                  + [f"1 {rng.randint(1, 20000)} {rng.randint(0, 10 ** 9)}" for _ in range(5000)]
                  + ["2 1 20000"]) + "\n",
        # largest: long array with small values, long query ranges
        make(rng, 25000, 7000, 99, True),
    ]
    return {"public": public, "private": private, "generated": generated}
