n,k=map(int,input().split())
a=sorted(map(int,input().split()))
ans=0
for i in range(n):
    lo=i+1
    hi=n
    t=k-a[i]
    while lo<hi:
        mid=(lo+hi)//2
        if a[mid]<=t:
            lo=mid+1
        else:
            hi=mid
    ans+=lo-i-1
print(ans)
