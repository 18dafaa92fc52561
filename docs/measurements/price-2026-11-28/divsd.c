#include <stdio.h>
#include <time.h>
static double now(void){ struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9; }
int main(void){ long n=20000000; unsigned long a=1,b=1,c=1,e=1; double t0=now();
 for(long i=0;i<n;i++) __asm__ volatile("add %0,%0\n\tadd %1,%1\n\tadd %2,%2\n\tadd %3,%3":"+r"(a),"+r"(b),"+r"(c),"+r"(e)); double plain=(now()-t0)/n*1e9/4;
 double x=1e300,y=3.0; t0=now(); for(long i=0;i<n;i++) __asm__ volatile("divsd %1,%0":"+x"(x):"x"(y)); double lat=(now()-t0)/n*1e9;
 double p=5.0,q=7.0,r=9.0,s=11.0,d=1.0000001; t0=now(); for(long i=0;i<n;i++) __asm__ volatile("divsd %4,%0\n\tdivsd %4,%1\n\tdivsd %4,%2\n\tdivsd %4,%3":"+x"(p),"+x"(q),"+x"(r),"+x"(s):"x"(d)); double thr=(now()-t0)/n*1e9/4;
 printf("plain %.3f ns; divsd latency %.2f ns (%.0f adds), throughput %.2f ns (%.0f adds)\n", plain, lat, lat/plain, thr, thr/plain); return x<0; }
