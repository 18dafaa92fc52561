from collections import deque

n, q = map(int, input().split())
b = list(map(int, input().split()))
fin = [0] * n
dq = deque(range(n))
t = 0
while dq:
    i = dq.popleft()
    used = 0
    while used < q and b[i] > 0:  # one unit of time per step
        b[i] -= 1
        used += 1
        t += 1
    if b[i] == 0:
        fin[i] = t
    else:
        dq.append(i)
print(*fin)
