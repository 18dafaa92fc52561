s = input()
cur = s[0]
cnt = 0
for ch in s:
    if ch == cur:
        cnt += 1
    else:
        print(cur, cnt, sep="", end="")
        cur = ch
        cnt = 1
print(cur, cnt, sep="")
