import sys
sys.setrecursionlimit(10000)

n, q = map(int, input().split())
p = [i for i in range(n + 1)]
rank = [0] * (n + 1)


def find(x):
    if p[x] != x:
        p[x] = find(p[x])
    return p[x]


def union(a, b):
    a = find(a)
    b = find(b)
    if a == b:
        return
    if rank[a] < rank[b]:
        a, b = b, a
    p[b] = a
    if rank[a] == rank[b]:
        rank[a] += 1


for _ in range(q):
    t, u, v = input().split()
    u = int(u)
    v = int(v)
    if t == '+':
        union(u, v)
    else:
        if find(u) == find(v):
            print("YES")
        else:
            print("NO")
