import sys

M = 1000000007
B = 911382323


def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    pw = [1] * (n + 1)
    for i in range(n):
        pw[i + 1] = pw[i] * B % M
    h = [0] * (n + 1)
    for i, ch in enumerate(s):
        h[i + 1] = (h[i] * B + ord(ch)) % M
    r = s[::-1]
    g = [0] * (n + 1)
    for i, ch in enumerate(r):
        g[i + 1] = (g[i] * B + ord(ch)) % M

    def fwd(l, rr):  # hash of s[l:rr]
        return (h[rr] - h[l] * pw[rr - l]) % M

    def bwd(l, rr):  # hash of reversed s[l:rr]
        return (g[n - l] - g[n - rr] * pw[rr - l]) % M

    best = 1
    for c in range(n):
        # odd palindromes centered at c: radius k means s[c-k : c+k+1]
        lo, hi = 0, min(c, n - 1 - c)
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if fwd(c - mid, c + mid + 1) == bwd(c - mid, c + mid + 1):
                lo = mid
            else:
                hi = mid - 1
        if 2 * lo + 1 > best:
            best = 2 * lo + 1
        # even palindromes centered between c-1 and c: s[c-k : c+k]
        lo, hi = 0, min(c, n - c)
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if fwd(c - mid, c + mid) == bwd(c - mid, c + mid):
                lo = mid
            else:
                hi = mid - 1
        if 2 * lo > best:
            best = 2 * lo
    print(best)


main()
