from collections import deque

n = int(input())
a = deque(sorted(map(int, input().split())))
b = deque()


def smallest():
    if not b or (a and a[0] <= b[0]):
        return a.popleft()
    return b.popleft()


ans = 0
for _ in range(n - 1):
    s = smallest() + smallest()
    ans += s
    b.append(s)
print(ans)
