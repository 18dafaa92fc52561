n = int(input())
a = list(map(int, input().split()))
res = [0] * n
stack = []  # indices to the right of i; the top is the nearest one
for i in range(n - 1, -1, -1):
    while stack and a[stack[-1]] <= a[i]:
        stack.pop()
    res[i] = stack[-1] + 1 if stack else -1
    stack.append(i)
print(*res)
