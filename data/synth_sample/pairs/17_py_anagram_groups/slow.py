n = int(input())
words = [input().strip() for _ in range(n)]
groups = []  # lists of words
for w in words:
    for g in groups:
        if sorted(g[0]) == sorted(w):
            g.append(w)
            break
    else:
        groups.append([w])
print(len(groups), max(len(g) for g in groups))
