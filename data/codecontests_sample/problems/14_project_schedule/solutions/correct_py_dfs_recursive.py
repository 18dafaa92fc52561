import sys
sys.setrecursionlimit(30000)

n, m = map(int, input().split())
t = [0] + list(map(int, input().split()))
children = [[] for _ in range(n + 1)]
for _ in range(m):
    a, b = map(int, input().split())
    children[a].append(b)

state = [0] * (n + 1)   # 0 = new, 1 = on stack, 2 = finished
longest = [0] * (n + 1)


class Cycle(Exception):
    pass


def go(v):
    state[v] = 1
    best = 0
    for u in children[v]:
        if state[u] == 1:
            raise Cycle()
        if state[u] == 0:
            go(u)
        if longest[u] > best:
            best = longest[u]
    longest[v] = best + t[v]
    state[v] = 2


try:
    for v in range(1, n + 1):
        if state[v] == 0:
            go(v)
    print(max(longest))
except Cycle:
    print(-1)
