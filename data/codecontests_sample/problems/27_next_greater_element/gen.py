import random


def fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a)) + "\n"


def tests():
    rng = random.Random(2027)
    public = [
        fmt([2, 7, 3, 5, 4, 6, 8]),
        fmt([5, 5, 1, 5]),
    ]
    private = [
        fmt([1]),  # n = 1
        fmt([1, 2, 3, 4, 5]),  # increasing
        fmt([9, 9, 9, 9]),  # all equal: nobody is strictly taller
        fmt([rng.randint(1, 5) for _ in range(200)]),  # many duplicates
    ]
    generated = [
        # strictly decreasing: every answer is -1
        fmt(list(range(12000, 0, -1))),
        # random values
        fmt([rng.randint(1, 10 ** 9) for _ in range(15000)]),
    ]
    # largest: decreasing "leaders" alternating with random smaller values
    n = 24000
    a = []
    for i in range(n // 2):
        lead = 1000000 - i * 20
        a.append(lead)
        a.append(rng.randint(1, lead - 1))
    generated.append(fmt(a))
    return {"public": public, "private": private, "generated": generated}
