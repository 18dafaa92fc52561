n = int(input())
values = [int(x) for x in input().split()]
q = int(input())
queries = [int(x) for x in input().split()]
answers = []
for x in queries:
    found = 0
    for v in values:
        if v == x:
            found = 1
            break
    answers.append(str(found))
print(" ".join(answers))
