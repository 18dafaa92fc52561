n, m = map(int, input().split())
t = list(map(int, input().split()))
made = 0
time = 0
while made < m:
    time += 1
    for x in t:
        if time % x == 0:
            made += 1
print(time)
