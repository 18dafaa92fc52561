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
 * Sealed mappings: see seal_check.
 *
 * What it prices beyond that (the machine pays it, no instruction shows it): instruction classes
 * whose cost is an order of magnitude above a plain one (weights), bytes the kernel moves for the
 * program, and page faults (see those sections).
 *
 * Summary line, one per process, on valgrind's log (Ir includes wextra, the priced repbytes, kbytes
 * and repstarts, and the faults' price; D1s and DLs: the data misses in a stream, within D1mr/D1mw and
 * DLmr/DLmw):
 *   ==pid== perfcount: Ir N I1mr N ILmr N D1mr N D1mw N DLmr N DLmw N clreq N kbytes N wextra N faults N
 *                      repbytes N repstarts N D1s N DLs N
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacehl.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_oset.h"
#include "pub_tool_vkiscnums.h"

static ULong n_ir = 0, n_clreq = 0, n_kbytes = 0, n_weighted = 0;
static ULong n_repbytes = 0, n_repstarts = 0;  /* fast-string (rep movs/stos) bytes and executions */
static ULong rep_prev = 0;  /* the fast-string instruction whose iteration ran last, 0 after other code */
static ULong tc_pending = 0;  /* a translation was made and has not run yet (see "Page faults") */
static void faults_close(Bool count);
static ULong i1mr = 0, ilmr = 0, d1mr = 0, d1mw = 0, dlmr = 0, dlmw = 0;
static ULong d1s = 0, dls = 0;  /* of the data misses, those in a stream (see "Streams") */

/* ---------------------------------------------------------------- options */
static Bool clo_cache_sim = False;
static const HChar* clo_geom[3] = {"32768,8,64", "32768,8,64", "8388608,16,64"};  /* I1, D1, LL */
/* instruction-class weights (sandbox/clock.py INSTRUCTION_WEIGHTS): x87 transcendental, divide, square
   root; a page fault is charged as --fault-pages pages written by the C library */
static Long clo_w_transc = 1, clo_w_div = 1, clo_w_sqrt = 1, clo_fault_pages = 0;
/* a byte a fast string (rep movs, rep stos) moves costs 1/--copy-bytes instruction, each fast-string
   instruction executed --rep-start more (its start-up), a byte the kernel moves 1/--kernel-bytes */
static Long clo_copy_bytes = 1, clo_rep_start = 0, clo_kernel_bytes = 1;

static Bool pc_process_cmd_line_option(const HChar* arg)
{
   if VG_BOOL_CLO(arg, "--cache-sim", clo_cache_sim) {}
   else if VG_STR_CLO(arg, "--I1", clo_geom[0]) {}
   else if VG_STR_CLO(arg, "--D1", clo_geom[1]) {}
   else if VG_STR_CLO(arg, "--LL", clo_geom[2]) {}
   else if VG_BINT_CLO(arg, "--w-transcendental", clo_w_transc, 1, 10000) {}
   else if VG_BINT_CLO(arg, "--w-div", clo_w_div, 1, 10000) {}
   else if VG_BINT_CLO(arg, "--w-sqrt", clo_w_sqrt, 1, 10000) {}
   else if VG_BINT_CLO(arg, "--fault-pages", clo_fault_pages, 0, 10000) {}
   else if VG_BINT_CLO(arg, "--copy-bytes", clo_copy_bytes, 1, 4096) {}
   else if VG_BINT_CLO(arg, "--rep-start", clo_rep_start, 0, 10000) {}
   else if VG_BINT_CLO(arg, "--kernel-bytes", clo_kernel_bytes, 1, 4096) {}
   else return False;
   return True;
}

static void pc_print_usage(void)
{
   VG_(printf)("    --cache-sim=no|yes        simulate the caches [no]\n"
               "    --I1=<size>,<assoc>,<line_size>  level-1 instruction cache [32768,8,64]\n"
               "    --D1=<size>,<assoc>,<line_size>  level-1 data cache [32768,8,64]\n"
               "    --LL=<size>,<assoc>,<line_size>  last-level cache [8388608,16,64]\n"
               "    --w-transcendental=N --w-div=N --w-sqrt=N  instruction-class weights [1]\n"
               "    --fault-pages=N           price of a page fault, in pages written [0]\n"
               "    --copy-bytes=N            bytes a fast string moves per instruction [1]\n"
               "    --rep-start=N             instructions per fast-string instruction executed [0]\n"
               "    --kernel-bytes=N          bytes the kernel moves for the program per instruction [1]\n");
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

/* An access of `size` bytes at `a` through L1 `c`: an L1 miss sends each missed line to LL.
   Returns 1 on an L1 miss, 3 on an LL miss too. */
static inline UInt sim_access(Cache* c, Addr a, UWord size, ULong* l1_miss, ULong* ll_miss)
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
   return missed ? (ll_missed ? 3 : 1) : 0;
}

/* Streams: a fast string walks memory in order and the machine fetches ahead of it, so its miss
   costs a fraction of a miss elsewhere (benchmarks/clock_weights.py measures both: a fast copy
   through L2 and through memory against a pointer chase). A fast string's miss on the line next to
   (after or before) one of the last PC_STREAMS lines the same execution of it missed continues that
   stream, as does a fault's zero-fill; cycles prices them by their own weights (sandbox/clock.py
   CYCLE_WEIGHTS). Every other access keeps the fitted weights, the kernel's copies too (priced
   as cheaply, a pipe would copy for less than glibc's vector-loop memcpy of a large block): the
   model cannot tell independent misses (overlapped by the machine, ~10x cheaper) from dependent
   ones (a pointer chase), and pricing every walk in order as a stream made the other walks look
   dearer than they run (docs/sandbox.md, "Priced work: copies and streams"). */
#define PC_STREAMS 16
static ULong stream_last[PC_STREAMS], stream_exec[PC_STREAMS];
static UInt stream_rr = 0;

/* a stream continues within one execution of a fast string (n_repstarts numbers them): its first
   line pays the full price, as natively nothing fetched it ahead */
static Bool in_stream(ULong block)
{
   UInt i;
   for (i = 0; i < PC_STREAMS; i++) {
      if (stream_exec[i] == n_repstarts && (block == stream_last[i] + 1 || block + 1 == stream_last[i])) {
         stream_last[i] = block;
         return True;
      }
   }
   stream_last[stream_rr] = block;
   stream_exec[stream_rr] = n_repstarts;
   stream_rr = (stream_rr + 1) % PC_STREAMS;
   return False;
}

static inline void sim_data(Addr a, UWord size, ULong* l1_miss, ULong* ll_miss)
{
   UInt m = sim_access(&D1, a, size, l1_miss, ll_miss);
   if (m && in_stream(a >> D1.line_bits)) {
      d1s++;
      if (m & 2) dls++;
   }
}

static VG_REGPARM(2) void pc_ifetch(Addr a, UWord size) { sim_access(&I1, a, size, &i1mr, &ilmr); }
static VG_REGPARM(2) void pc_dread(Addr a, UWord size) { sim_access(&D1, a, size, &d1mr, &dlmr); }
static VG_REGPARM(2) void pc_dwrite(Addr a, UWord size) { sim_access(&D1, a, size, &d1mw, &dlmw); }
static VG_REGPARM(2) void pc_dread_copy(Addr a, UWord size) { sim_data(a, size, &d1mr, &dlmr); }
static VG_REGPARM(2) void pc_dwrite_copy(Addr a, UWord size) { sim_data(a, size, &d1mw, &dlmw); }

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

static Bool in_copy = False;  /* translating a fast string: its accesses are a copy's */

static void call(IRSB* sb, Bool write, IRExpr* addr, Int size, IRExpr* guard)
{
   void* fn = write ? (in_copy ? (void*)&pc_dwrite_copy : (void*)&pc_dwrite)
                    : (in_copy ? (void*)&pc_dread_copy : (void*)&pc_dread);
   IRDirty* di = unsafeIRDirty_0_N(2, write ? "pc_dwrite" : "pc_dread", VG_(fnptr_to_fnentry)(fn),
                                   mkIRExprVec_2(addr, mkIRExpr_HWord(size)));
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

/* ---------------------------------------------------------------- instruction weights */
/* An instruction whose cost differs from a plain one by an order of magnitude counts as several, by
   what it computes (its IR operations: any opcode that divides is a divide), not by a list of
   opcodes. The weights are measured by benchmarks/clock_weights.py and set in sandbox/clock.py. */
static Long op_weight(IROp op)
{
   switch (op) {
   case Iop_SinF64: case Iop_CosF64: case Iop_TanF64: case Iop_AtanF64: case Iop_Yl2xF64: case Iop_Yl2xp1F64:
   case Iop_2xm1F64: case Iop_PRemF64: case Iop_PRemC3210F64: case Iop_PRem1F64: case Iop_PRem1C3210F64:
   case Iop_ScaleF64:
      return clo_w_transc;
   case Iop_DivU32: case Iop_DivS32: case Iop_DivU64: case Iop_DivS64: case Iop_DivU128: case Iop_DivS128:
   case Iop_DivU32E: case Iop_DivS32E: case Iop_DivU64E: case Iop_DivS64E: case Iop_DivU128E: case Iop_DivS128E:
   case Iop_DivModU64to32: case Iop_DivModS64to32: case Iop_DivModU128to64: case Iop_DivModS128to64:
   case Iop_DivModU64to64: case Iop_DivModS64to64: case Iop_DivModU32to32: case Iop_DivModS32to32:
   case Iop_DivF32: case Iop_DivF64: case Iop_DivF64r32: case Iop_DivF128: case Iop_DivD64: case Iop_DivD128:
   case Iop_Div32F0x4: case Iop_Div64F0x2: case Iop_Div32Fx4: case Iop_Div64Fx2: case Iop_Div32Fx8:
   case Iop_Div64Fx4:
      return clo_w_div;
   case Iop_SqrtF16: case Iop_SqrtF32: case Iop_SqrtF64: case Iop_SqrtF128: case Iop_Sqrt32F0x4:
   case Iop_Sqrt64F0x2: case Iop_Sqrt16Fx8: case Iop_Sqrt32Fx4: case Iop_Sqrt64Fx2: case Iop_Sqrt32Fx8:
   case Iop_Sqrt64Fx4:
      return clo_w_sqrt;
   default:
      return 1;
   }
}

static Long expr_weight(IRExpr* e)
{
   switch (e->tag) {
   case Iex_Unop: return op_weight(e->Iex.Unop.op);
   case Iex_Binop: return op_weight(e->Iex.Binop.op);
   case Iex_Triop: return op_weight(e->Iex.Triop.details->op);
   case Iex_Qop: return op_weight(e->Iex.Qop.details->op);
   default: return 1;
   }
}

/* The element size of a rep-prefixed string instruction (movs, stos, lods, cmps, scas), else 0;
   *fast: a fast string (movs, stos), which the machine runs a cache line at a time. Valgrind counts
   each iteration as an instruction, so `rep movsq` would move 8 bytes per count where glibc's
   `rep movsb` moves 1: a fast string's iteration counts its bytes at the copy's price (--copy-bytes),
   and each execution its start-up (--rep-start); any other's iteration its element's bytes. */
static Long rep_element(Addr a, UInt len, Bool* fast)
{
   const UChar* p = (const UChar*)a;
   const UChar* end = p + len;
   Bool rep = False, w16 = False, w64 = False;
   for (; p < end; p++) {
      UChar b = *p;
      if (b == 0xF2 || b == 0xF3) rep = True;
      else if (b == 0x66) w16 = True;
      else if (b == 0x67 || b == 0xF0 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65) {}
      else if ((b & 0xF0) == 0x40) w64 = (b & 8) != 0;  /* REX */
      else break;
   }
   if (!rep || p >= end) return 0;
   *fast = *p == 0xA4 || *p == 0xA5 || *p == 0xAA || *p == 0xAB;
   switch (*p) {
   case 0xA4: case 0xA6: case 0xAA: case 0xAC: case 0xAE: return 1;
   case 0xA5: case 0xA7: case 0xAB: case 0xAD: case 0xAF: return w64 ? 8 : w16 ? 2 : 4;
   default: return 0;
   }
}

/* One iteration of the fast string at `addr`: its bytes, and a start-up unless the iteration that
   ran last was this instruction's (valgrind runs each iteration as a superblock of its own, and any
   other superblock clears rep_prev on entry). */
static void fast_rep(IRSB* sb, Addr addr, Long elem)
{
   IRTemp prev = newIRTemp(sb->tyenv, Ity_I64), ne = newIRTemp(sb->tyenv, Ity_I1);
   IRTemp start = newIRTemp(sb->tyenv, Ity_I64), old = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr* at = mkIRExpr_HWord((HWord)&n_repstarts);
   addStmtToIRSB(sb, IRStmt_WrTmp(prev, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&rep_prev))));
   addStmtToIRSB(sb, IRStmt_WrTmp(ne, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(prev), IRExpr_Const(IRConst_U64(addr)))));
   addStmtToIRSB(sb, IRStmt_WrTmp(start, IRExpr_Unop(Iop_1Uto64, IRExpr_RdTmp(ne))));
   addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, at)));
   addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), IRExpr_RdTmp(start))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, at, IRExpr_RdTmp(sum)));
   add_to(sb, &n_repbytes, elem);
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&rep_prev), IRExpr_Const(IRConst_U64(addr))));
}

static void pc_after_translation(void)
{
   faults_close(False);
   tc_pending = 0;
}

static IRSB* pc_instrument(VgCallbackClosure* closure, IRSB* sbIn, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   Int i = 0;
   ULong pending = 0;   /* instructions entered since the counter was last updated */
   ULong extra = 0;     /* their weight over one each (n_weighted) */
   Long cur = 1;        /* the weight of the current instruction so far */
   Addr prev_line = ~(Addr)0;
   Bool fast = False;
   IRSB* sbOut = deepCopyIRSBExceptStmts(sbIn);
   IRTemp tp, tg;
   IRDirty* after;
   faults_close(!tc_pending);  /* the program's faults since the last mark; valgrind's translating from here */
   tc_pending = 1;
   in_copy = False;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(sbOut, sbIn->stmts[i]);
      i++;
   }
   /* on entry, after a translation: its faults (valgrind writing its code cache) are not the program's */
   tp = newIRTemp(sbOut->tyenv, Ity_I64);
   tg = newIRTemp(sbOut->tyenv, Ity_I1);
   addStmtToIRSB(sbOut, IRStmt_WrTmp(tp, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&tc_pending))));
   addStmtToIRSB(sbOut, IRStmt_WrTmp(tg, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(tp), IRExpr_Const(IRConst_U64(0)))));
   after = unsafeIRDirty_0_N(0, "pc_after_translation", VG_(fnptr_to_fnentry)(&pc_after_translation), mkIRExprVec_0());
   after->guard = IRExpr_RdTmp(tg);
   addStmtToIRSB(sbOut, IRStmt_Dirty(after));
   if (i < sbIn->stmts_used && !(rep_element(sbIn->stmts[i]->Ist.IMark.addr, sbIn->stmts[i]->Ist.IMark.len, &fast)
                                 && fast))
      addStmtToIRSB(sbOut, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&rep_prev), IRExpr_Const(IRConst_U64(0))));
   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      if (!st || st->tag == Ist_NoOp) continue;
      if (st->tag == Ist_IMark) {
         fast = False;
         Long elem = rep_element(st->Ist.IMark.addr, st->Ist.IMark.len, &fast);
         in_copy = fast;
         if (fast) {  /* priced by its bytes and start-up, not as an instruction */
            fast_rep(sbOut, st->Ist.IMark.addr, elem);
            cur = 1;
         } else {
            pending++;
            cur = elem > 1 ? elem : 1;
            extra += cur - 1;
         }
         Addr first = st->Ist.IMark.addr >> I1.line_bits, last = (st->Ist.IMark.addr + st->Ist.IMark.len - 1) >> I1.line_bits;
         /* a fetch from the line the previous instruction of this superblock ended in hits and leaves
            the LRU order as it is (that line is its set's most recent): no call, the same counts */
         Bool same_line = first == last && first == prev_line;
         prev_line = last;
         if (clo_cache_sim && st->Ist.IMark.len > 0 && !same_line)
            addStmtToIRSB(sbOut, IRStmt_Dirty(unsafeIRDirty_0_N(
               2, "pc_ifetch", VG_(fnptr_to_fnentry)(&pc_ifetch),
               mkIRExprVec_2(mkIRExpr_HWord((HWord)st->Ist.IMark.addr), mkIRExpr_HWord(st->Ist.IMark.len)))));
      } else {
         if (st->tag == Ist_WrTmp) {
            Long w = expr_weight(st->Ist.WrTmp.data);
            if (w > cur) { extra += w - cur; cur = w; }
         }
         if (clo_cache_sim) data_accesses(sbOut, st);
      }
      if (st->tag == Ist_Exit) {  /* a side exit: count what ran before it leaves */
         if (pending) { add_to(sbOut, &n_ir, pending); pending = 0; }
         if (extra) { add_to(sbOut, &n_weighted, extra); extra = 0; }
         if (st->Ist.Exit.jk == Ijk_ClientReq) {
            add_to(sbOut, &n_clreq, 1);
            st = IRStmt_Exit(st->Ist.Exit.guard, Ijk_Boring, st->Ist.Exit.dst, st->Ist.Exit.offsIP);
         }
      }
      addStmtToIRSB(sbOut, st);
   }
   if (pending) add_to(sbOut, &n_ir, pending);
   if (extra) add_to(sbOut, &n_weighted, extra);
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

static void seal_check(UInt syscallno, UWord* args)
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
/* Bytes a system call moves for the program are work outside any guest instruction: a copy made by
   writing into a pipe and reading it back would count a few instructions where memcpy counts its
   bytes (glibc copies large blocks with `rep movsb`). By capability, not by a list of calls: every
   byte of the program's memory the kernel reads (valgrind's pre-syscall read check: the buffer of a
   write, send, ...) or writes (its post-syscall write mark: the bytes a read, recv, getrandom, ...
   filled) is charged at the kernel's measured price (--kernel-bytes), and with the cache
   simulation goes through the data cache line by line as that copy would, with the kernel's own
   buffer on the other side (a pipe's 64 KB, reused). Calls that move data
   between two files without the program's memory have no such check: their byte count is priced. */
#define KBUF_BASE ((Addr)0xffff800000000000ULL)  /* the kernel's side of its copies: outside user space */
#define KBUF_SIZE ((Addr)65536)                   /* a pipe's buffer */
static Addr kbuf_off = 0;

static void kernel_touch(Addr a, SizeT size, Bool write)
{
   Addr line, end = a + size, step;
   n_kbytes += size;
   if (!clo_cache_sim || size == 0) return;
   step = (Addr)1 << D1.line_bits;
   for (line = a & ~(step - 1); line < end; line += step) {
      /* the user's line, and the line of the kernel's buffer on the other side of the copy */
      sim_access(&D1, line, 1, write ? &d1mw : &d1mr, write ? &dlmw : &dlmr);
      sim_access(&D1, KBUF_BASE + kbuf_off, 1, write ? &d1mr : &d1mw, write ? &dlmr : &dlmw);
      kbuf_off = (kbuf_off + step) % KBUF_SIZE;
   }
}

static void pc_pre_mem_read(CorePart part, ThreadId tid, const HChar* s, Addr a, SizeT size)
{
   if (part == Vg_CoreSysCall) kernel_touch(a, size, False);
}


/* Page faults: a fresh zero page, a copy-on-write copy, a page of a file mapped in are the kernel's
   work for the program (MADV_DONTNEED "zeroes" memory with no instruction). Counted by the process's
   fault count (all its threads) while the program runs between its system calls and valgrind's
   translations: valgrind's own start-up, its work inside a call (reading the symbols of a library
   just mapped: thousands of faults) and its translating (writing its code cache: from the start
   of a translation to the first run of its code) are left out, so the count stays exact run to run
   and close to the program's native faults; a call's faults up to the moment it
   filled the program's memory (a read into a fresh buffer) are the program's. Each fault is
   charged as --fault-pages pages written by the C library: 4096 instructions a page, and under the
   cache simulation 64 data-cache write misses a page. */
extern SysRes VG_(do_syscall)(UWord, UWord, UWord, UWord, UWord, UWord, UWord, UWord, UWord);

static ULong fault_count(void)
{
   Long ru[18];  /* struct rusage: two timevals, then maxrss, ixrss, idrss, isrss, minflt, majflt, ... */
   SysRes r = VG_(do_syscall)(__NR_getrusage, 0 /* RUSAGE_SELF */, (UWord)ru, 0, 0, 0, 0, 0, 0);
   return sr_isError(r) ? 0 : (ULong)(ru[8] + ru[9]);
}

static ULong n_faults = 0, faults_mark = 0;
static Bool started = False;  /* the program has made its first system call */

/* Close the interval since the last mark (counting its faults as the program's or not) and open
   the next one. */
static void faults_close(Bool count)
{
   ULong now;
   if (!started) return;
   now = fault_count();
   if (count) n_faults += now - faults_mark;
   faults_mark = now;
}

/* File pages. A file page's fault costs what the page cache holds at that moment: the kernel maps
   the cached neighbours of the page (fault-around) but skips any not cached, or held locked by
   another process (reclaim scanning it, the writeback of a binary just written), so the program's
   later reads of them fault again or not: a count that moved with the page cache is not a clock.
   So the pages of every readable private file mapping (the executable, the loader, the libraries,
   a file the program maps) are read in where the program cannot be timed (valgrind's start, the
   mmap call), by MADV_POPULATE_READ, and priced at a fixed rate: each distinct page of a file
   mapped, read or not, once however often it is mapped (the loader maps a library's whole extent,
   then its segments over it), at one fault per FAULT_AROUND pages (the kernel's default
   fault-around window, 64 KiB). A private page is mapped read-only, so its writes still fault
   (copy-on-write), once a page, counted as above. Shared mappings are not read in (a shared page
   read in could be written without a fault: memory zeroed outside the count), nor pages made
   readable later by mprotect or mremap: their faults are counted as they come. The seccomp filter
   passes MADV_POPULATE_READ for this (sandbox/seccomp.py). Not closed: a page read in and then
   reclaimed by the host (mapped pages, under heavy memory pressure) faults again if read
   (docs/limitations.md, "Deterministic clocks"). */
#define PC_MADV_POPULATE_READ 22
#define FAULT_AROUND 16
static OSet* file_pages = NULL;  /* (file, page index) keys of the file pages priced */

static void populate_files(Addr lo, Addr hi)
{
   Addr a = lo, p;
   if (!file_pages) file_pages = VG_(OSetWord_Create)(VG_(malloc), "perfcount.file_pages", VG_(free));
   while (a < hi) {
      NSegment const* seg = VG_(am_find_nsegment)(a);
      Addr end;
      if (!seg || seg->end < a) break;
      end = seg->end < hi - 1 ? seg->end + 1 : hi;
      if (seg->kind == SkFileC && seg->hasR) {
         VG_(do_syscall)(__NR_madvise, a, end - a, PC_MADV_POPULATE_READ, 0, 0, 0, 0, 0);
         for (p = a & ~(Addr)4095; p < end; p += 4096) {
            /* a key per (device, inode, page): a collision would price a page less, the same every run */
            UWord key = (UWord)((seg->dev * 0x9E3779B97F4A7C15ULL) ^ (seg->ino * 0xC2B2AE3D27D4EB4FULL)
                                ^ (ULong)((seg->offset + (Off64T)(p - seg->start)) >> 12));
            if (!VG_(OSetWord_Contains)(file_pages, key)) VG_(OSetWord_Insert)(file_pages, key);
         }
      }
      if (seg->end == ~(Addr)0) break;
      a = seg->end + 1;
   }
   faults_close(False);  /* its faults are valgrind's work, priced above */
}

static ULong file_faults(void)
{
   ULong pages = file_pages ? (ULong)VG_(OSetWord_Size)(file_pages) : 0;
   return (pages + FAULT_AROUND - 1) / FAULT_AROUND;
}

/* at the first call: the files valgrind mapped for the program (its executable, the loader), priced
   as above; and valgrind's own (this tool's code, which runs between the program's instructions: a
   page of it evicted since the last run would fault inside the count), read in and not priced */
static void populate_start(void)
{
   Int i, n = 0;
   Addr* starts = VG_(get_segment_starts)(SkFileC, &n);
   for (i = 0; i < n; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      if (seg) populate_files(seg->start, seg->end + 1);
   }
   if (starts) VG_(free)(starts);
   starts = VG_(get_segment_starts)(SkFileV, &n);
   for (i = 0; i < n; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      if (seg && seg->kind == SkFileV && seg->hasR)
         VG_(do_syscall)(__NR_madvise, seg->start, seg->end + 1 - seg->start, PC_MADV_POPULATE_READ, 0, 0, 0, 0, 0);
   }
   if (starts) VG_(free)(starts);
}

static ULong ir_at_call[1024];  /* per thread: the instruction count when its call began */

/* the kernel has just filled the program's memory (a read into a fresh buffer faults there): the
   faults of the call so far are the program's */
static void pc_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT size)
{
   if (part != Vg_CoreSysCall) return;
   kernel_touch(a, size, True);
   faults_close(True);
}

static Bool maps_code[1024];  /* per thread: its call maps a file, or makes memory executable */

static void pc_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs)
{
   seal_check(syscallno, args);
   faults_close(!tc_pending);
   if (!started) {
      populate_start();
      faults_mark = fault_count();
   }
   started = True;
   ir_at_call[tid % 1024] = n_ir;
   /* valgrind reads the symbols of a file once its segments are mapped (or made executable):
      thousands of its own faults */
   maps_code[tid % 1024] = (syscallno == __NR_mmap && !(args[3] & VKI_MAP_ANONYMOUS))
                           || (syscallno == __NR_mprotect && (args[2] & VKI_PROT_EXEC));
}

static void pc_post_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs, SysRes res)
{
   /* a call's faults are the program's (taken in the kernel: anonymous MAP_POPULATE, a read into a
      fresh buffer), except where valgrind may read a mapped file's symbols, unless
      another thread ran program code meanwhile */
   faults_close((!maps_code[tid % 1024] || n_ir != ir_at_call[tid % 1024]) && !tc_pending);
   if (sr_isError(res)) return;
   /* a private file mapping's pages: read in now, outside the count (see "File pages") */
   if (syscallno == __NR_mmap && !(args[3] & (VKI_MAP_ANONYMOUS | VKI_MAP_SHARED)))
      populate_files(sr_Res(res), sr_Res(res) + args[1]);
   switch (syscallno) {
   case __NR_splice: case __NR_tee: case __NR_sendfile: case __NR_copy_file_range:
      n_kbytes += (ULong)sr_Res(res);
      break;
   default:
      break;
   }
}

/* ---------------------------------------------------------------- set-up and summary */
static void pc_post_clo_init(void)
{
   Int i;
   for (i = 0; i < PC_STREAMS; i++) stream_last[i] = ~0ULL - 1;  /* next to no line */
   if (clo_cache_sim) {
      cache_init(&I1, clo_geom[0], "--I1");
      cache_init(&D1, clo_geom[1], "--D1");
      cache_init(&LL, clo_geom[2], "--LL");
   }
}

static void pc_fini(Int exitcode)
{
   /* Ir: guest instructions, their weights over one (wextra), the bytes fast strings and the kernel
      moved at the copy's price (repbytes, kbytes), the fast strings' start-ups (repstarts) and the
      price of the page faults (faults x fault-pages x 4096; under the cache simulation their
      zero-fill's write misses too, a stream) */
   ULong faults;
   faults_close(!tc_pending);
   faults = n_faults + file_faults();
   ULong fault_bytes = faults * (ULong)clo_fault_pages * 4096;
   ULong copies = n_repbytes / (ULong)clo_copy_bytes + n_repstarts * (ULong)clo_rep_start
                  + n_kbytes / (ULong)clo_kernel_bytes;
   if (clo_cache_sim) {
      d1mw += fault_bytes / 64;
      d1s += fault_bytes / 64;
   }
   VG_(umsg)("perfcount: Ir %llu I1mr %llu ILmr %llu D1mr %llu D1mw %llu DLmr %llu DLmw %llu clreq %llu "
             "kbytes %llu wextra %llu faults %llu repbytes %llu repstarts %llu D1s %llu DLs %llu\n",
             n_ir + n_weighted + copies + fault_bytes, i1mr, ilmr, d1mr, d1mw, dlmr, dlmw, n_clreq, n_kbytes,
             n_weighted, faults, n_repbytes, n_repstarts, d1s, dls);
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
   VG_(track_pre_mem_read)(pc_pre_mem_read);
   VG_(track_post_mem_write)(pc_post_mem_write);
}

VG_DETERMINE_INTERFACE_VERSION(pc_pre_clo_init)
