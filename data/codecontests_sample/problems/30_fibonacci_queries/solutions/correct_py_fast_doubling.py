import sys

MOD = 10 ** 9 + 7


def fib(n):
    a, b = 0, 1
    for bit in bin(n)[2:]:
        c = a * (2 * b - a) % MOD
        d = (a * a + b * b) % MOD
        if bit == "1":
            a, b = d, (c + d) % MOD
        else:
            a, b = c, d
    return a


def main():
    data = sys.stdin.buffer.read().split()
    t = int(data[0])
    sys.stdout.write("\n".join(str(fib(int(x))) for x in data[1:t + 1]) + "\n")


main()
