/* perfcount: perfalign's valgrind tool for the deterministic clocks (sandbox/clock.py).
 *
 * SPDX-License-Identifier: Apache-2.0 (this source, as the rest of perfalign). The tool built from it
 * links valgrind's core (GPL-2.0-or-later), so that executable is a combined work under the GPL
 * (version 3, with which Apache-2.0 is compatible); sandbox/perfcount.py builds it on the host where
 * it runs and perfalign distributes no binary of it.
 *
 * What it counts, per process: guest instructions executed (Ir) and, with --cache-sim=yes, the
 * misses of a fixed cache hierarchy (I1, D1 and a unified LL; set-associative, LRU, write-allocate;
 * an access that straddles two lines is one access, missing if either line misses) -- the
 * quantities cachegrind reports, written from scratch with the same definitions.
 *
 * Why not cachegrind: under any stock tool a program can issue valgrind's *client requests*, and
 * VALGRIND_NON_SIMD_CALL runs a function of its choice on the real CPU, uncounted. A program can
 * build the request's magic sequence at run time (valgrind translates code from any readable
 * page), so no scan of its files finds it. Here every client request is made inert at translation
 * time: the superblock that ends in one jumps on as if the request were absent, so the request
 * returns its default value (as on the real CPU) and the program behaves as it does natively.
 * The number of requests it attempted is reported beside the counts (an audit flag).
 *
 * Sealed mappings: see pc_pre_syscall.
 *
 * Summary line, one per process, on valgrind's log (Ir includes kbytes, see pc_post_syscall):
 *   ==pid== perfcount: Ir N I1mr N ILmr N D1mr N D1mw N DLmr N DLmw N clreq N kbytes N
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vkiscnums.h"

static ULong n_ir = 0, n_clreq = 0, n_kbytes = 0;
static ULong i1mr = 0, ilmr = 0, d1mr = 0, d1mw = 0, dlmr = 0, dlmw = 0;

/* ---------------------------------------------------------------- options */
static Bool clo_cache_sim = False;
static const HChar* clo_geom[3] = {"32768,8,64", "32768,8,64", "8388608,16,64"};  /* I1, D1, LL */

static Bool pc_process_cmd_line_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cache-sim", clo_cache_sim) {}
   else if VG_STR_CLO(arg, "--I1", clo_geom[0]) {}
   else if VG_STR_CLO(arg, "--D1", clo_geom[1]) {}
   else if VG_STR_CLO(arg, "--LL", clo_geom[2]) {}
   else return False;
   return True;
}

static void pc_print_usage(void)
{
   VG_(printf)("    --cache-sim=no|yes        simulate the caches [no]\n"
               "    --I1=<size>,<assoc>,<line_size>  level-1 instruction cache [32768,8,64]\n"
               "    --D1=<size>,<assoc>,<line_size>  level-1 data cache [32768,8,64]\n"
               "    --LL=<size>,<assoc>,<line_size>  last-level cache [8388608,16,64]\n");
}

static void pc_print_debug_usage(void) {}

/* ---------------------------------------------------------------- the caches */
typedef struct {
   UWord sets, assoc, line_bits, set_mask;
   ULong* tags;                /* per set, most recently used first; ~0 = empty */
} Cache;

static Cache I1, D1, LL;

static void cache_init(Cache* c, const HChar* spec, const HChar* name)
{
   const HChar* p = spec;
   HChar* end;
   Long v[3];
   Int i;
   for (i = 0; i < 3; i++) {
      v[i] = VG_(strtoll10)(p, &end);
      if (end == p || (i < 2 && *end != ',') || (i == 2 && *end != 0) || v[i] <= 0)
         VG_(fmsg_bad_option)(name, "expected <size>,<assoc>,<line_size> (positive integers)\n");
      p = end + 1;
   }
   if ((v[2] & (v[2] - 1)) != 0 || v[0] % (v[1] * v[2]) != 0 || ((v[0] / (v[1] * v[2])) & (v[0] / (v[1] * v[2]) - 1)))
      VG_(fmsg_bad_option)(name, "line size and number of sets (size / assoc / line) must be powers of two\n");
   c->assoc = v[1];
   c->sets = v[0] / (v[1] * v[2]);
   c->set_mask = c->sets - 1;
   c->line_bits = 0;
   while ((1L << c->line_bits) < v[2]) c->line_bits++;
   c->tags = VG_(malloc)("perfcount.cache", sizeof(ULong) * c->sets * c->assoc);
   for (i = 0; i < (Int)(c->sets * c->assoc); i++) c->tags[i] = ~0ULL;
}

/* One reference to memory block `block` (address >> line_bits): True on a hit. LRU. */
static inline Bool cache_ref(Cache* c, ULong block)
{
   ULong* s = c->tags + (block & c->set_mask) * c->assoc;
   UWord i, j;
   if (s[0] == block) return True;
   for (i = 1; i < c->assoc; i++) {
      if (s[i] == block) {
         for (j = i; j > 0; j--) s[j] = s[j - 1];
         s[0] = block;
         return True;
      }
   }
   for (j = c->assoc - 1; j > 0; j--) s[j] = s[j - 1];
   s[0] = block;
   return False;
}

/* An access of `size` bytes at `a` through L1 `c`: an L1 miss sends each missed line to LL. */
static inline void sim_access(Cache* c, Addr a, UWord size, ULong* l1_miss, ULong* ll_miss)
{
   ULong b, first = a >> c->line_bits, last = (a + (size ? size : 1) - 1) >> c->line_bits;
   Bool missed = False, ll_missed = False;
   for (b = first; b <= last; b++) {
      if (!cache_ref(c, b)) {
         missed = True;
         if (!cache_ref(&LL, (b << c->line_bits) >> LL.line_bits)) ll_missed = True;
      }
   }
   if (missed) (*l1_miss)++;
   if (ll_missed) (*ll_miss)++;
}

static VG_REGPARM(2) void pc_ifetch(Addr a, UWord size) { sim_access(&I1, a, size, &i1mr, &ilmr); }
static VG_REGPARM(2) void pc_dread(Addr a, UWord size) { sim_access(&D1, a, size, &d1mr, &dlmr); }
static VG_REGPARM(2) void pc_dwrite(Addr a, UWord size) { sim_access(&D1, a, size, &d1mw, &dlmw); }

/* ---------------------------------------------------------------- instrumentation */
static void add_to(IRSB* sb, ULong* ctr, ULong n)
{
   /* *ctr += n, inline (valgrind runs one guest thread at a time) */
   IRTemp t1 = newIRTemp(sb->tyenv, Ity_I64), t2 = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr* a = mkIRExpr_HWord((HWord)ctr);
   addStmtToIRSB(sb, IRStmt_WrTmp(t1, IRExpr_Load(Iend_LE, Ity_I64, a)));
   addStmtToIRSB(sb, IRStmt_WrTmp(t2, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(t1), IRExpr_Const(IRConst_U64(n)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, a, IRExpr_RdTmp(t2)));
}

static void call(IRSB* sb, Bool write, IRExpr* addr, Int size, IRExpr* guard)
{
   IRDirty* di = write
      ? unsafeIRDirty_0_N(2, "pc_dwrite", VG_(fnptr_to_fnentry)(&pc_dwrite), mkIRExprVec_2(addr, mkIRExpr_HWord(size)))
      : unsafeIRDirty_0_N(2, "pc_dread", VG_(fnptr_to_fnentry)(&pc_dread), mkIRExprVec_2(addr, mkIRExpr_HWord(size)));
   if (guard) di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void data_accesses(IRSB* sb, IRStmt* st)
{
   IRType wide, narrow;
   switch (st->tag) {
   case Ist_WrTmp:
      if (st->Ist.WrTmp.data->tag == Iex_Load)
         call(sb, False, st->Ist.WrTmp.data->Iex.Load.addr, sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty), NULL);
      break;
   case Ist_Store:
      call(sb, True, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(sb->tyenv, st->Ist.Store.data)), NULL);
      break;
   case Ist_StoreG: {
      IRStoreG* sg = st->Ist.StoreG.details;
      call(sb, True, sg->addr, sizeofIRType(typeOfIRExpr(sb->tyenv, sg->data)), sg->guard);
      break;
   }
   case Ist_LoadG: {
      IRLoadG* lg = st->Ist.LoadG.details;
      typeOfIRLoadGOp(lg->cvt, &wide, &narrow);
      call(sb, False, lg->addr, sizeofIRType(narrow), lg->guard);
      break;
   }
   case Ist_Dirty: {
      IRDirty* d = st->Ist.Dirty.details;
      if (d->mFx != Ifx_None)
         call(sb, d->mFx != Ifx_Read, d->mAddr, d->mSize, d->guard);
      break;
   }
   case Ist_CAS: {
      IRCAS* cas = st->Ist.CAS.details;
      Int size = sizeofIRType(typeOfIRExpr(sb->tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
      call(sb, True, cas->addr, size, NULL);
      break;
   }
   case Ist_LLSC:
      if (st->Ist.LLSC.storedata == NULL)
         call(sb, False, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(sb->tyenv, st->Ist.LLSC.result)), NULL);
      else
         call(sb, True, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(sb->tyenv, st->Ist.LLSC.storedata)), NULL);
      break;
   default:
      break;
   }
}

static IRSB* pc_instrument(VgCallbackClosure* closure, IRSB* sbIn, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   Int i = 0;
   ULong pending = 0;   /* instructions entered since the counter was last updated */
   Addr prev_line = ~(Addr)0;
   IRSB* sbOut = deepCopyIRSBExceptStmts(sbIn);
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(sbOut, sbIn->stmts[i]);
      i++;
   }
   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      if (!st || st->tag == Ist_NoOp) continue;
      if (st->tag == Ist_IMark) {
         pending++;
         Addr first = st->Ist.IMark.addr >> I1.line_bits, last = (st->Ist.IMark.addr + st->Ist.IMark.len - 1) >> I1.line_bits;
         /* a fetch from the line the previous instruction of this superblock ended in hits and leaves
            the LRU order as it is (that line is its set's most recent): no call, the same counts */
         Bool same_line = first == last && first == prev_line;
         prev_line = last;
         if (clo_cache_sim && st->Ist.IMark.len > 0 && !same_line)
            addStmtToIRSB(sbOut, IRStmt_Dirty(unsafeIRDirty_0_N(
               2, "pc_ifetch", VG_(fnptr_to_fnentry)(&pc_ifetch),
               mkIRExprVec_2(mkIRExpr_HWord((HWord)st->Ist.IMark.addr), mkIRExpr_HWord(st->Ist.IMark.len)))));
      } else if (clo_cache_sim) {
         data_accesses(sbOut, st);
      }
      if (st->tag == Ist_Exit) {  /* a side exit: count what ran before it leaves */
         if (pending) { add_to(sbOut, &n_ir, pending); pending = 0; }
         if (st->Ist.Exit.jk == Ijk_ClientReq) {
            add_to(sbOut, &n_clreq, 1);
            st = IRStmt_Exit(st->Ist.Exit.guard, Ijk_Boring, st->Ist.Exit.dst, st->Ist.Exit.offsIP);
         }
      }
      addStmtToIRSB(sbOut, st);
   }
   if (pending) add_to(sbOut, &n_ir, pending);
   if (sbOut->jumpkind == Ijk_ClientReq) {  /* the request is dropped: execution goes on after it */
      add_to(sbOut, &n_clreq, 1);
      sbOut->jumpkind = Ijk_Boring;
   }
   return sbOut;
}

/* ---------------------------------------------------------------- sealed mappings */
/* valgrind 3.19 has no mseal (462): it answers ENOSYS without calling the kernel, so under a count
   the probe driver's seal of its code, read-only data and RELRO (measure/probe_cpp.py) would be
   absent and a constructor could make the GOT writable again. perfcount keeps the seals itself: it
   records every range the program asks to seal and ends the run (a "perfcount: sealed" line, no
   summary: the count is refused) at any later call that would change one, as the kernel refuses
   them for a sealed range: mprotect, pkey_mprotect, munmap, mremap from or onto it, mmap with
   MAP_FIXED over it, and madvise other than a hint. */
#define PC_NR_MSEAL 462
#define PC_MAX_SEALS 1024
static Addr seal_lo[PC_MAX_SEALS], seal_hi[PC_MAX_SEALS];
static Int n_seals = 0;

/* [a, a + len) meets a sealed range (the kernel rounds len up to whole pages, and the ranges and a
   valid a are page-aligned: the same answer); a range that wraps around counts as meeting one */
static Bool sealed(Addr a, UWord len)
{
   Int i;
   if (n_seals == 0 || len == 0) return False;
   if (a + len < a) return True;
   for (i = 0; i < n_seals; i++)
      if (a < seal_hi[i] && a + len > seal_lo[i]) return True;
   return False;
}

static void refuse(const HChar* call)
{
   VG_(umsg)("perfcount: sealed: %s on a sealed mapping\n", call);
   VG_(exit)(1);
}

static void pc_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs)
{
   switch (syscallno) {
   case PC_NR_MSEAL:
      if (args[1] > 0 && args[0] + args[1] > args[0]) {
         if (n_seals == PC_MAX_SEALS) refuse("mseal beyond the tool's table");
         seal_lo[n_seals] = args[0];
         seal_hi[n_seals] = args[0] + args[1];
         n_seals++;
      }
      break;
   case __NR_mprotect: case __NR_pkey_mprotect:
      if (sealed(args[0], args[1])) refuse("mprotect");
      break;
   case __NR_munmap:
      if (sealed(args[0], args[1])) refuse("munmap");
      break;
   case __NR_mremap:  /* old, old_size, new_size, flags, new; MREMAP_FIXED = 2 */
      if (sealed(args[0], args[1]) || ((args[3] & 2) && sealed(args[4], args[2]))) refuse("mremap");
      break;
   case __NR_mmap:  /* MAP_FIXED = 0x10 */
      if ((args[3] & 0x10) && sealed(args[0], args[1])) refuse("mmap");
      break;
   case __NR_madvise:  /* hints only: NORMAL, RANDOM, SEQUENTIAL, DOFORK, (NO)HUGEPAGE, DONT/DODUMP, KEEPONFORK */
      if (sealed(args[0], args[1]) && !(args[2] <= 2 || args[2] == 11 || (args[2] >= 14 && args[2] <= 17)
                                        || args[2] == 19))
         refuse("madvise");
      break;
   default:
      break;
   }
}

/* ---------------------------------------------------------------- work the kernel does */
/* Bytes a system call moved for the program are work outside any guest instruction: a copy made
   by writing into a pipe and reading it back would count a few instructions where memcpy counts one
   per byte (glibc copies large blocks with `rep movsb`, one guest instruction per byte). Each byte a
   data-moving call reports is charged one instruction, the C library's copy under this count; the
   calls are those of the sandbox's seccomp allowlist whose result is a byte count. */
static void pc_post_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs, SysRes res)
{
   if (sr_isError(res)) return;
   switch (syscallno) {
   case __NR_read: case __NR_write: case __NR_pread64: case __NR_pwrite64:
   case __NR_readv: case __NR_writev: case __NR_preadv: case __NR_pwritev:
   case __NR_preadv2: case __NR_pwritev2:
   case __NR_recvfrom: case __NR_sendto: case __NR_recvmsg: case __NR_sendmsg:
   case __NR_splice: case __NR_tee: case __NR_vmsplice: case __NR_sendfile: case __NR_copy_file_range:
   case __NR_process_vm_readv: case __NR_process_vm_writev: case __NR_getrandom:
      n_kbytes += (ULong)sr_Res(res);
      break;
   default:
      break;
   }
}

/* ---------------------------------------------------------------- set-up and summary */
static void pc_post_clo_init(void)
{
   if (clo_cache_sim) {
      cache_init(&I1, clo_geom[0], "--I1");
      cache_init(&D1, clo_geom[1], "--D1");
      cache_init(&LL, clo_geom[2], "--LL");
   }
}

static void pc_fini(Int exitcode)
{
   /* Ir: guest instructions plus one per byte the kernel moved (kbytes) */
   VG_(umsg)("perfcount: Ir %llu I1mr %llu ILmr %llu D1mr %llu D1mw %llu DLmr %llu DLmw %llu clreq %llu "
             "kbytes %llu\n", n_ir + n_kbytes, i1mr, ilmr, d1mr, d1mw, dlmr, dlmw, n_clreq, n_kbytes);
}

static void pc_pre_clo_init(void)
{
   VG_(details_name)("perfcount");
   VG_(details_version)(NULL);
   VG_(details_description)("perfalign's instruction and cache-miss counter");
   VG_(details_copyright_author)("perfalign contributors");
   VG_(details_bug_reports_to)("the perfalign repository");
   VG_(details_avg_translation_sizeB)(500);
   VG_(basic_tool_funcs)(pc_post_clo_init, pc_instrument, pc_fini);
   VG_(needs_command_line_options)(pc_process_cmd_line_option, pc_print_usage, pc_print_debug_usage);
   VG_(needs_syscall_wrapper)(pc_pre_syscall, pc_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pc_pre_clo_init)
