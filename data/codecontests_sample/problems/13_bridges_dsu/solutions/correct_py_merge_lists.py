import sys
input = sys.stdin.readline

n, q = map(int, input().split())
label = list(range(n + 1))
members = [[i] for i in range(n + 1)]
ans = []
for _ in range(q):
    c, u, v = input().split()
    a = label[int(u)]
    b = label[int(v)]
    if c == '+':
        if a != b:
            # move the smaller group into the bigger one
            if len(members[a]) < len(members[b]):
                a, b = b, a
            for x in members[b]:
                label[x] = a
            members[a].extend(members[b])
            members[b] = []
    else:
        ans.append('YES' if a == b else 'NO')
print('\n'.join(ans))
