n, k = map(int, input().split())
people = list(range(1, n + 1))
idx = 0
order = []
while people:
    idx = (idx + k - 1) % len(people)
    order.append(people.pop(idx))
print(" ".join(map(str, order)))
