s = input()
n = len(s)
best = 1
for c in range(2 * n - 1):
    l = c // 2
    r = l + c % 2
    while l >= 0 and r < n and s[l] == s[r]:
        l -= 1
        r += 1
    best = max(best, r - l - 1)
print(best)
