from collections import deque

n, s = map(int, input().split())
a = list(map(int, input().split()))
window = deque()
total = 0
count = 0
for x in a:
    window.append(x)
    total += x
    while total > s:
        total -= window.popleft()
    count += len(window)
print(count)
