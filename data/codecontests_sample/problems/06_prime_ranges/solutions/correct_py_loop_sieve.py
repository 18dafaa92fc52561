q = int(input())
queries = []
mx = 1
for _ in range(q):
    l, r = map(int, input().split())
    queries.append((l, r))
    if r > mx:
        mx = r
is_prime = [True] * (mx + 1)
is_prime[0] = False
is_prime[1] = False
p = 2
while p * p <= mx:
    if is_prime[p]:
        for j in range(p * p, mx + 1, p):
            is_prime[j] = False
    p += 1
cnt = [0] * (mx + 1)
c = 0
for i in range(mx + 1):
    if is_prime[i]:
        c += 1
    cnt[i] = c
for l, r in queries:
    print(cnt[r] - cnt[l - 1])
