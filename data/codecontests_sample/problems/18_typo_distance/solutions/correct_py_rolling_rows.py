import sys


def edit_distance(s, t):
    prev = list(range(len(t) + 1))
    for i, cs in enumerate(s, 1):
        cur = [i]
        left = i
        for j, ct in enumerate(t):
            diag = prev[j]
            if cs != ct:
                diag += 1
                up = prev[j + 1] + 1
                if up < diag:
                    diag = up
                if left + 1 < diag:
                    diag = left + 1
            cur.append(diag)
            left = diag
        prev = cur
    return prev[-1]


def main():
    s, t = sys.stdin.read().split()
    print(edit_distance(s, t))


main()
