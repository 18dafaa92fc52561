import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1:1 + n]))
    M = max(a)
    r = int(M ** 0.5)
    small = bytearray([1]) * (r + 1)
    primes = []
    for i in range(2, r + 1):
        if small[i]:
            primes.append(i)
            small[i * i::i] = bytes(len(range(i * i, r + 1, i)))
    spf = list(range(M + 1))
    # larger primes first, so that the smallest prime factor is written last
    for p in reversed(primes):
        spf[p * p::p] = [p] * len(range(p * p, M + 1, p))
    total = 0
    for x in a:
        s = 1
        while x > 1:
            p = spf[x]
            term = 1
            pk = 1
            while x % p == 0:
                x //= p
                pk *= p
                term += pk
            s *= term
        total += s
    print(total)


main()
