import re
import sys

s = sys.stdin.readline().strip()
print(re.sub(r"(.)\1*", lambda m: m.group(1) + str(len(m.group(0))), s))
