import sys

data = sys.stdin.read().split()
n = int(data[0])
a = [int(x) for x in data[1:n + 1]]
ans = [-1] * n
st = []
for i in range(n):
    while st and a[st[-1]] <= a[i]:
        ans[st.pop()] = i + 1
    st.append(i)
print(" ".join(map(str, ans)))
