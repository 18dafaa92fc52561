def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with two rolling rows: O(len(a) * len(b)) time, O(len(b)) memory."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


if __name__ == "__main__":
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    print("ok")
