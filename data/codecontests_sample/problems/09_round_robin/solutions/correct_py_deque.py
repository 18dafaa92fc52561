import sys
from collections import deque


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    rem = list(map(int, data[2:2 + n]))
    fin = [0] * n
    dq = deque(range(n))
    pop, push = dq.popleft, dq.append
    t = 0
    while dq:
        i = pop()
        r = rem[i]
        if r <= q:
            t += r
            fin[i] = t
        else:
            t += q
            rem[i] = r - q
            push(i)
    print(" ".join(map(str, fin)))


main()
