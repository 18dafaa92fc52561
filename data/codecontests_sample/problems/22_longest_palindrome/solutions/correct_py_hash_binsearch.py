import sys

MOD = (1 << 61) - 1
BASE = 131


def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    pw = [1] * (n + 1)
    fw = [0] * (n + 1)
    bw = [0] * (n + 1)
    for i in range(n):
        pw[i + 1] = pw[i] * BASE % MOD
        fw[i + 1] = (fw[i] * BASE + ord(s[i])) % MOD
    r = s[::-1]
    for i in range(n):
        bw[i + 1] = (bw[i] * BASE + ord(r[i])) % MOD

    def has(length):
        # is there a palindrome of exactly this length?
        for i in range(n - length + 1):
            j = i + length
            h1 = (fw[j] - fw[i] * pw[length]) % MOD
            # reversed substring s[i:j] is r[n-j:n-i]
            h2 = (bw[n - i] - bw[n - j] * pw[length]) % MOD
            if h1 == h2:
                return True
        return False

    best = 1
    for parity in (0, 1):
        lo, hi = 0, (n - parity) // 2  # length = 2*k + parity
        if parity == 0:
            lo = 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if has(2 * mid + parity):
                lo = mid
            else:
                hi = mid - 1
        best = max(best, 2 * lo + parity)
    print(best)


main()
