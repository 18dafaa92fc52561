n = int(input())
a = [int(x) for x in input().split()]
# insertion sort
for i in range(1, n):
    key = a[i]
    j = i - 1
    while j >= 0 and a[j] > key:
        a[j + 1] = a[j]
        j -= 1
    a[j + 1] = key
print(" ".join(str(x) for x in a))
