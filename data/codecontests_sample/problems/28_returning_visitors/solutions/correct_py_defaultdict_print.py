from collections import defaultdict

n = int(input())
ids = input().split()
cnt = defaultdict(int)
for x in ids:
    print(cnt[x])
    cnt[x] += 1
