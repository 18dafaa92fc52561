n, d = map(int, input().split())
a = list(map(int, input().split()))
count = 0
for i in range(n):
    for j in range(n):
        if a[j] - a[i] == d:
            count += 1
print(count)
