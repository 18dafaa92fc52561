n = int(input())
a = list(map(int, input().split()))
total = 0
while len(a) > 1:
    # find the indices of the two smallest piles
    i1 = i2 = -1
    for i in range(len(a)):
        if i1 == -1 or a[i] < a[i1]:
            i2 = i1
            i1 = i
        elif i2 == -1 or a[i] < a[i2]:
            i2 = i
    s = a[i1] + a[i2]
    total += s
    for i in sorted((i1, i2), reverse=True):
        a.pop(i)
    a.append(s)
print(total)
