import sys


def main():
    t, p = sys.stdin.buffer.read().split()
    m = len(p)
    print(sum(1 for i in range(len(t) - m + 1) if t[i:i + m] == p))


main()
