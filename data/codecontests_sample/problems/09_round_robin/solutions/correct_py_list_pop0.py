n, q = map(int, input().split())
b = list(map(int, input().split()))
ans = [0] * n
line = list(range(n))
time = 0
while line:
    i = line.pop(0)
    if b[i] > q:
        b[i] -= q
        time += q
        line.append(i)
    else:
        time += b[i]
        ans[i] = time
print(*ans)
