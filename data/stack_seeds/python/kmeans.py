import random


def kmeans(points, k, iters=50, seed=0):
    rng = random.Random(seed)
    centers = rng.sample(points, k)
    assign = [0] * len(points)
    for _ in range(iters):
        changed = False
        for i, (x, y) in enumerate(points):
            best = min(range(k), key=lambda c: (x - centers[c][0]) ** 2 + (y - centers[c][1]) ** 2)
            if best != assign[i]:
                assign[i] = best
                changed = True
        sums = [[0.0, 0.0, 0] for _ in range(k)]
        for (x, y), c in zip(points, assign):
            sums[c][0] += x
            sums[c][1] += y
            sums[c][2] += 1
        centers = [(sx / n, sy / n) if n else centers[c] for c, (sx, sy, n) in enumerate(sums)]
        if not changed:
            break
    return centers, assign
