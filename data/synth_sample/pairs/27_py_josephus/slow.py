n, k = map(int, input().split())
people = list(range(1, n + 1))
idx = 0
while len(people) > 1:
    idx = (idx + k - 1) % len(people)
    people.pop(idx)
print(people[0])
