import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); q = int(data[1])
    parent = list(range(n + 1))
    size = [1] * (n + 1)
    out = []
    pos = 2
    for _ in range(q):
        c = data[pos]; u = int(data[pos + 1]); v = int(data[pos + 2])
        pos += 3
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        if c == b'+':
            if u != v:
                if size[u] < size[v]:
                    u, v = v, u
                parent[v] = u
                size[u] += size[v]
        else:
            out.append("YES" if u == v else "NO")
    sys.stdout.write("\n".join(out) + "\n" if out else "")


main()
