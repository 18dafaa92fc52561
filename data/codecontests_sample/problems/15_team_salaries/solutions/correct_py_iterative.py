import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    s = [0] + [int(x) for x in data[1:n + 1]]
    adj = [[] for _ in range(n + 1)]
    it = iter(data[n + 1:])
    for u, v in zip(it, it):
        u = int(u); v = int(v)
        adj[u].append(v)
        adj[v].append(u)
    parent = [0] * (n + 1)
    parent[1] = -1
    order = [1]
    for v in order:
        pv = parent[v]
        for u in adj[v]:
            if u != pv:
                parent[u] = v
                order.append(u)
    for v in reversed(order[1:]):
        s[parent[v]] += s[v]
    sys.stdout.write(" ".join(map(str, s[1:])) + "\n")


main()
