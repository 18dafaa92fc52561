import random


def grid_to_input(rows):
    return "%d %d\n%s\n" % (len(rows), len(rows[0]), "\n".join(rows))


def random_grid(rng, n, m, wall_prob):
    g = [["#" if rng.random() < wall_prob else "." for _ in range(m)] for _ in range(n)]
    cells = rng.sample(range(n * m), 2)
    (sr, sc), (tr, tc) = [divmod(c, m) for c in cells]
    g[sr][sc] = "S"
    g[tr][tc] = "T"
    return ["".join(r) for r in g]


def snake_grid(n, m):
    # corridors on even rows, joined alternately at the right and left end
    g = [["#"] * m for _ in range(n)]
    for r in range(0, n, 2):
        for c in range(m):
            g[r][c] = "."
        if r + 1 < n:
            g[r + 1][m - 1 if (r // 2) % 2 == 0 else 0] = "."
    g[0][0] = "S"
    last = n - 1 if (n - 1) % 2 == 0 else n - 2
    g[last][m - 1 if (last // 2) % 2 == 1 else 0] = "T"
    return ["".join(r) for r in g]


def tests():
    rng = random.Random(1011)
    public = [
        "4 5\nS..#.\n.#...\n.#.#.\n...#T\n",
        "3 3\nS#.\n##.\n..T\n",
    ]
    private = [
        "1 2\nTS\n",
        grid_to_input(random_grid(rng, 40, 60, 0.25)),
        # T walled in completely
        grid_to_input(["S....", ".###.", ".#T#.", ".###.", "....."]),
    ]
    generated = [
        grid_to_input(snake_grid(299, 300)),
        grid_to_input(random_grid(rng, 200, 250, 0.3)),
        grid_to_input(random_grid(rng, 350, 350, 0.12)),
    ]
    return {"public": public, "private": private, "generated": generated}
