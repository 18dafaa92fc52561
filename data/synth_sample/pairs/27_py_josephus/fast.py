n, k = map(int, input().split())
# J(1) = 0, J(m) = (J(m-1) + k) mod m, 0-based
pos = 0
for m in range(2, n + 1):
    pos = (pos + k) % m
print(pos + 1)
