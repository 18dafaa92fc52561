import sys
input = sys.stdin.readline


def solve():
    q = int(input())
    qs = [tuple(map(int, input().split())) for _ in range(q)]
    n = max(r for _, r in qs)
    prime = [True] * (n + 1)
    prime[0] = False
    if n >= 1:
        prime[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if prime[i]:
            prime[i * i::i] = [False] * ((n - i * i) // i + 1)
    cnt = [0] * (n + 1)
    for i in range(1, n + 1):
        cnt[i] = cnt[i - 1] + prime[i]
    print("\n".join(str(cnt[r] - cnt[l - 1]) for l, r in qs))


solve()
