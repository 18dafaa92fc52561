import sys
sys.setrecursionlimit(20000)

n = int(input())
a = [0] + list(map(int, input().split()))
tree = [[] for _ in range(n + 1)]
for _ in range(n - 1):
    u, v = map(int, input().split())
    tree[u].append(v)
    tree[v].append(u)

total = [0] * (n + 1)


def dfs(v, parent):
    res = a[v]
    for to in tree[v]:
        if to != parent:
            res += dfs(to, v)
    total[v] = res
    return res


dfs(1, 0)
for i in range(1, n + 1):
    print(total[i])
