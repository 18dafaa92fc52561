from bisect import bisect_right

n, k = map(int, input().split())
a = list(map(int, input().split()))
a.sort()
total = 0
for i in range(n):
    # count j > i with a[j] <= k - a[i]
    pos = bisect_right(a, k - a[i])
    if pos > i + 1:
        total += pos - i - 1
print(total)
