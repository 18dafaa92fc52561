t = input()
p = input()
print(t.count(p))
