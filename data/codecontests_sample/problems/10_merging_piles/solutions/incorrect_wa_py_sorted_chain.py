n = int(input())
a = sorted(map(int, input().split()))
# merge the piles one by one in increasing order of size
cur = a[0]
cost = 0
for x in a[1:]:
    cur += x
    cost += cur
print(cost)
