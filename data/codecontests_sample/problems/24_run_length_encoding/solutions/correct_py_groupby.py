from itertools import groupby

s = input().strip()
print("".join(ch + str(len(list(g))) for ch, g in groupby(s)))
