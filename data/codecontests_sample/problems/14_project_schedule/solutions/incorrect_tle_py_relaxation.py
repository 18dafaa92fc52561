import sys

def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = [0] + [int(x) for x in data[2:2 + n]]
    edges = [(int(data[2 + n + 2 * i]), int(data[3 + n + 2 * i])) for i in range(m)]
    # finish[v] = earliest finishing time of v, Bellman-Ford style
    finish = t[:]
    for it in range(n + 1):
        changed = False
        for a, b in edges:
            if finish[a] + t[b] > finish[b]:
                finish[b] = finish[a] + t[b]
                changed = True
        if not changed:
            print(max(finish))
            return
    print(-1)

main()
