n = int(input())
groups = {}
for _ in range(n):
    w = input().strip()
    cnt = [0] * 26
    for ch in w:
        cnt[ord(ch) - 97] += 1
    key = tuple(cnt)
    groups[key] = groups.get(key, 0) + 1
ans = 0
for v in groups.values():
    ans += v * (v - 1) // 2
print(ans)
