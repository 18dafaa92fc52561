import sys
from itertools import accumulate


def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    nums = list(map(int, data[1:1 + 2 * q]))
    n = max(nums[1::2])
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = 0
    if n >= 1:
        sieve[1] = 0
    i = 2
    while i * i <= n:
        if sieve[i]:
            sieve[i * i::i] = bytes(len(range(i * i, n + 1, i)))
        i += 1
    pre = list(accumulate(sieve))
    out = []
    for k in range(q):
        l = nums[2 * k]
        r = nums[2 * k + 1]
        out.append(pre[r] - (pre[l - 1] if l > 1 else 0))
    sys.stdout.write("\n".join(map(str, out)) + "\n")


main()
