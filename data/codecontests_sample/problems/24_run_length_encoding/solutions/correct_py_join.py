import sys


def main():
    s = sys.stdin.readline().strip()
    parts = []
    n = len(s)
    i = 0
    while i < n:
        j = i + 1
        c = s[i]
        while j < n and s[j] == c:
            j += 1
        parts.append(c)
        parts.append(str(j - i))
        i = j
    sys.stdout.write("".join(parts) + "\n")


main()
