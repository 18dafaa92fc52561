n = int(input())
a = list(map(int, input().split()))
ans = []
for i in range(n):
    r = -1
    for j in range(i + 1, n):
        if a[j] > a[i]:
            r = j + 1
            break
    ans.append(r)
print(*ans)
