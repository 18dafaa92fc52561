import random


def runs_string(rng, letters, length, max_run):
    out = []
    total = 0
    prev = None
    while total < length:
        c = rng.choice(letters)
        if c == prev:
            continue
        k = min(rng.randint(1, max_run), length - total)
        out.append(c * k)
        total += k
        prev = c
    return "".join(out)


def tests():
    rng = random.Random(2024)
    public = [
        "aaabccdddd\n",
        "abc\n",
    ]
    private = [
        "z\n",  # a single character
        "q" * 1000 + "\n",  # one long run
        "aaaaaaaaaabbbbbbbbbbbc\n",  # runs of length exactly 10 and 11
    ]
    generated = []
    # runs of length up to 30 over the whole alphabet
    generated.append(runs_string(rng, "abcdefghijklmnopqrstuvwxyz", 50000, 30) + "\n")
    # a few very long runs
    generated.append(runs_string(rng, "xyz", 100000, 20000) + "\n")
    # largest: random two-letter string, about 85 000 runs, mostly very short
    generated.append("".join(rng.choice("ab") for _ in range(170000)) + "\n")
    # worst case for quadratic concatenation: 200 000 runs of length 1 (the TLE solution
    # needs > 1 s of CPU time here, not only of wall time on a loaded machine)
    generated.append("ab" * 100000 + "\n")
    return {"public": public, "private": private, "generated": generated}
