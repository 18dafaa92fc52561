import sys

def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    qs = list(map(int, data[1:]))
    n = max(qs)
    s = bytearray([1]) * (n + 1)
    s[0] = 0
    for i in range(2, int(n ** 0.5) + 1):
        if s[i]:
            s[i * i::i] = bytearray(len(s[i * i::i]))
    pre = [0] * (n + 1)
    c = 0
    for i in range(n + 1):
        c += s[i]
        pre[i] = c
    res = []
    for k in range(q):
        l, r = qs[2 * k], qs[2 * k + 1]
        res.append(pre[r] - pre[l - 1])
    print("\n".join(map(str, res)))

main()
