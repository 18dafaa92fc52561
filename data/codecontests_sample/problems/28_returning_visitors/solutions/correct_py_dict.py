import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    seen = {}
    out = []
    for x in data[1:n + 1]:
        c = seen.get(x, 0)
        out.append(c)
        seen[x] = c + 1
    sys.stdout.write("\n".join(map(str, out)) + "\n")


main()
