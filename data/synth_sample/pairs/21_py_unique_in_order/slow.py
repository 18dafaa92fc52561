n = int(input())
a = [int(x) for x in input().split()]
result = []
for x in a:
    if x not in result:
        result.append(x)
print(" ".join(str(x) for x in result))
