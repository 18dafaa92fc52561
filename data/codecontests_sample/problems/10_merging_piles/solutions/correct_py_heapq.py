import sys
import heapq


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    h = list(map(int, data[1:1 + n]))
    heapq.heapify(h)
    pop, replace = heapq.heappop, heapq.heapreplace
    total = 0
    for _ in range(n - 1):
        a = pop(h)
        s = a + h[0]
        total += s
        replace(h, s)
    print(total)


main()
