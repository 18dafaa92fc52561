n = int(input())
a = list(map(int, input().split()))
visited = []
out = []
for x in a:
    out.append(visited.count(x))
    visited.append(x)
print("\n".join(map(str, out)))
