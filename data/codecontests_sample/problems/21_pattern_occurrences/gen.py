import random


def tests():
    rng = random.Random(2021)
    public = [
        "abababa\naba\n",
        "aaaaa\naa\n",
    ]
    private = [
        "z\nz\n",  # smallest input
        "mississippi\nmississippi\n",  # pattern equals the text
        "qwerty" * 50 + "\nertyq\n",  # periodic text, non-overlapping occurrences
    ]
    # random binary text, short pattern
    t = "".join(rng.choice("ab") for _ in range(2000))
    private.append(t + "\nabba\n")

    generated = []
    # random text over 3 letters, pattern cut out of the text
    t = "".join(rng.choice("abc") for _ in range(60000))
    i = rng.randrange(0, len(t) - 8)
    generated.append(t + "\n" + t[i:i + 8] + "\n")
    # no occurrence at all: the pattern differs from the text only in its last character
    generated.append("a" * 30000 + "\n" + "a" * 299 + "b\n")
    # largest: long runs of 'a' with a few 'b', long all-'a' pattern
    # (many overlapping occurrences, each alignment compares up to |p| characters)
    n, m = 120000, 1000
    chars = ["a"] * n
    for _ in range(40):
        chars[rng.randrange(n)] = "b"
    generated.append("".join(chars) + "\n" + "a" * m + "\n")
    return {"public": public, "private": private, "generated": generated}
