import bisect

n = int(input())
piles = sorted(map(int, input().split()))
cost = 0
while len(piles) > 1:
    x = piles.pop(0)
    y = piles.pop(0)
    cost += x + y
    bisect.insort(piles, x + y)
print(cost)
