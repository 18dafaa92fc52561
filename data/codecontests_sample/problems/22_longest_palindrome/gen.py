import random


def tests():
    rng = random.Random(2022)
    public = [
        "babad\n",
        "cbbd\n",
    ]
    private = [
        "x\n",  # single character
        "abcdefghijklmnopqrstuvwxyz\n",  # answer 1
        "abccbaxyzzyx\n",  # two even palindromes of the same length
    ]
    # random over a small alphabet
    private.append("".join(rng.choice("ab") for _ in range(300)) + "\n")

    generated = []
    # random lowercase string with a long odd palindrome planted inside
    s = [rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8000)]
    half = [rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1234)]
    pal = half + ["q"] + half[::-1]
    s[3000:3000 + len(pal)] = pal
    generated.append("".join(s) + "\n")
    # random string over two letters
    generated.append("".join(rng.choice("xy") for _ in range(9000)) + "\n")
    # largest: a random prefix followed by a long block of 'a'
    # (quadratic work for expand-around-center, long scans for checks by length)
    s = [rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(2000)] + ["a"] * 8000
    s[6321] = "b"
    generated.append("".join(s) + "\n")
    return {"public": public, "private": private, "generated": generated}
