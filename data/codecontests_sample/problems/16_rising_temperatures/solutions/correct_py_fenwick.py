n = int(input())
a = list(map(int, input().split()))
rank = {v: i + 1 for i, v in enumerate(sorted(set(a)))}
size = len(rank)
tree = [0] * (size + 1)
answer = 0
for x in a:
    r = rank[x] - 1
    best = 0
    while r > 0:
        if tree[r] > best:
            best = tree[r]
        r -= r & (-r)
    best += 1
    if best > answer:
        answer = best
    r = rank[x]
    while r <= size:
        if tree[r] < best:
            tree[r] = best
        r += r & (-r)
print(answer)
