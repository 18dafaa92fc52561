import sys
input = sys.stdin.readline

n, q = map(int, input().split())
left = list(map(int, input().split()))
res = [0] * n
order = list(range(n))
head = 0
now = 0
while head < len(order):
    i = order[head]
    head += 1
    if left[i] > q:
        left[i] -= q
        now += q
        order.append(i)
    else:
        now += left[i]
        res[i] = now
sys.stdout.write(" ".join(map(str, res)) + "\n")
