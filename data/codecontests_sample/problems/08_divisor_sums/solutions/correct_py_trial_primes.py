import sys

def main():
    it = sys.stdin.buffer.read().split()
    n = int(it[0])
    LIM = 1001
    mark = [True] * LIM
    primes = []
    for i in range(2, LIM):
        if mark[i]:
            primes.append(i)
            for j in range(i * i, LIM, i):
                mark[j] = False
    ans = 0
    for k in range(1, n + 1):
        x = int(it[k])
        s = 1
        for p in primes:
            if p * p > x:
                break
            if x % p == 0:
                t = 1
                pk = 1
                while x % p == 0:
                    x //= p
                    pk *= p
                    t += pk
                s *= t
        if x > 1:
            s *= x + 1
        ans += s
    print(ans)

main()
