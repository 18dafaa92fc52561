from functools import cmp_to_key


def cmp(x, y):
    # earlier time first; at the same time an end (-1) goes before a start (+1)
    if x[0] != y[0]:
        return -1 if x[0] < y[0] else 1
    return x[1] - y[1]


n = int(input())
events = []
for i in range(n):
    l, r = map(int, input().split())
    events.append([l, 1])
    events.append([r, -1])
events.sort(key=cmp_to_key(cmp))
rooms = 0
need = 0
for t, d in events:
    rooms += d
    need = max(need, rooms)
print(need)
