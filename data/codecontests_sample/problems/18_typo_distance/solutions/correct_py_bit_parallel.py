import sys


def main():
    a, b = sys.stdin.read().split()
    # Myers / Hyyro bit-vector algorithm: the column of the DP table over a
    # is kept as two bit masks of +1 / -1 vertical differences.
    m = len(a)
    full = (1 << m) - 1
    top = 1 << (m - 1)
    peq = {}
    for i, ch in enumerate(a):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    pv = full
    mv = 0
    score = m
    for ch in b:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (full ^ (xh | pv))
        mh = pv & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = mh | (full ^ (xv | ph))
        mv = ph & xv
    print(score)


main()
