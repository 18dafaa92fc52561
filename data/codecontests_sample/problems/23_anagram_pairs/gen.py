import random

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def fmt(words):
    return str(len(words)) + "\n" + "\n".join(words) + "\n"


def shuffled(rng, w):
    c = list(w)
    rng.shuffle(c)
    return "".join(c)


def tests():
    rng = random.Random(2023)
    public = [
        fmt(["listen", "silent", "enlist", "google", "gogole"]),
        fmt(["a", "b", "ab", "ba", "aab"]),
    ]
    private = [
        fmt(["z"]),  # one word, no pairs
        fmt(["ad", "bc", "da", "cb", "aabb", "abab", "abb"]),  # equal letter sums but not anagrams
        fmt(["abc"] * 6 + ["cab", "acb"]),  # identical words count as anagrams too
    ]
    generated = []
    # long words: few groups, every word is a shuffle of one of 30 base words of length 200..400
    bases = ["".join(rng.choice(LETTERS) for _ in range(rng.randint(200, 400))) for _ in range(30)]
    words = []
    total = 0
    while total < 60000:
        w = shuffled(rng, rng.choice(bases))
        words.append(w)
        total += len(w)
    generated.append(fmt(words))
    # many distinct short words over a small alphabet
    words = ["".join(rng.choice("abcdef") for _ in range(rng.randint(1, 6))) for _ in range(20000)]
    generated.append(fmt(words))
    # largest: 86 000 short words, one huge group (the answer does not fit into 32 bits)
    words = []
    for _ in range(86000):
        r = rng.random()
        if r < 0.82:
            words.append("e")
        elif r < 0.9:
            words.append(rng.choice(["xy", "yx"]))
        else:
            words.append(rng.choice(LETTERS))
    generated.append(fmt(words))
    return {"public": public, "private": private, "generated": generated}
