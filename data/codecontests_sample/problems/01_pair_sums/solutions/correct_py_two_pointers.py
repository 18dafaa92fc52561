import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = sorted(map(int, data[2:2 + n]))
    i, j = 0, n - 1
    ans = 0
    while i < j:
        if a[i] + a[j] <= k:
            ans += j - i
            i += 1
        else:
            j -= 1
    print(ans)


main()
