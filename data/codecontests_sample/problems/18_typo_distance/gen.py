import random

ALPHA = "abcdefghijklmnopqrstuvwxyz"


def mutate(rng, s, k, alpha):
    s = list(s)
    for _ in range(k):
        op = rng.randrange(3)
        pos = rng.randrange(len(s) + 1)
        if op == 0:
            s.insert(pos, rng.choice(alpha))
        elif op == 1 and len(s) > 1 and pos < len(s):
            del s[pos]
        elif pos < len(s):
            s[pos] = rng.choice(alpha)
    return "".join(s)


def rand(rng, n, alpha):
    return "".join(rng.choice(alpha) for _ in range(n))


def tests():
    rng = random.Random(1018)
    public = [
        "kitten\nsitting\n",
        "codeforces\ncodeforces\n",
    ]
    base = rand(rng, 750, ALPHA)
    private = [
        "a\nzzzzzzzzzz\n",
        "abcdefgh\nhgfedcba\n",
        rand(rng, 120, "ab") + "\n" + rand(rng, 90, "ab") + "\n",
    ]
    generated = [
        base + "\n" + mutate(rng, base, 200, ALPHA) + "\n",
        rand(rng, 600, "abc") + "\n" + rand(rng, 700, "abc") + "\n",
        rand(rng, 40, ALPHA) + "\n" + rand(rng, 640, ALPHA) + "\n",
    ]
    return {"public": public, "private": private, "generated": generated}
