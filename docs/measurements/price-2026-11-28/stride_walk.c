#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){ struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9; }
int main(void){ long big=256L<<20; char* p=malloc(big); for(long i=0;i<big;i+=64) p[i]=1; unsigned long s=0;
  unsigned long a=1,b=1,c=1,e=1; double t0=now(); for(long i=0;i<10000000;i++) __asm__ volatile("add %0,%0\n\tadd %1,%1\n\tadd %2,%2\n\tadd %3,%3":"+r"(a),"+r"(b),"+r"(c),"+r"(e)); double plain=(now()-t0)/1e7*1e9/4;
  long sizes[2]={1<<20, 64L<<20};
  for(int z=0;z<2;z++){ long sz=sizes[z]; long lines=sz/64;
   for(long st=1; st<=1024; st*=2){ long reps = (z==0? 400: 4); t0=now();
     for(long r=0;r<reps;r++) for(long off=0; off<st; off++) for(long l=off; l<lines; l+=st) s+=*(volatile char*)(p+l*64);
     double ns=(now()-t0)/((double)reps*lines)*1e9; printf("size %ldMB stride %4ld lines: %.2f ns/line = %.1f plain\n", sz>>20, st, ns, ns/plain); } }
  return s==7; }
