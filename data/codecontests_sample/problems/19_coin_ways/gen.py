import random


def fmt(x, coins):
    return "%d %d\n%s\n" % (len(coins), x, " ".join(map(str, coins)))


def tests():
    rng = random.Random(1019)
    public = [
        "3 9\n2 3 5\n",
        "2 7\n2 4\n",
    ]
    private = [
        "1 1\n1\n",
        "2 3\n5 7\n",
        fmt(100000, [1]),
    ]
    generated = [
        fmt(30000, rng.sample(range(1, 5001), 100)),
        fmt(20000, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]),
        fmt(40000, rng.sample(range(2, 200), 30)),
    ]
    return {"public": public, "private": private, "generated": generated}
