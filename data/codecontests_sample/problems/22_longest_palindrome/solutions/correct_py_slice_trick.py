s = input().strip()
best = 1
for i in range(1, len(s)):
    # a palindrome ending at i can beat `best` only if its length is best+1 or best+2
    a = i - best - 1
    if a >= 0:
        cand = s[a:i + 1]
        if cand == cand[::-1]:
            best += 2
            continue
    cand = s[i - best:i + 1]
    if cand == cand[::-1]:
        best += 1
print(best)
