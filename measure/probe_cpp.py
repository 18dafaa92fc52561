"""C++ text of the probe: what the trusted driver translation unit adds around a suite's own driver.

The candidate is compiled as its own translation unit (``sandbox.Job.extra_sources``); nothing
here is in its scope, and nothing it defines but its own function reaches the driver or the
libraries (``sandbox.Job.exports``, sandbox/privatelink.py): a candidate's ``printf``,
``getrusage``, ``opendir``, ``operator new``... stay its own, so every libc call below is libc's.
The driver TU calls the candidate through an *observer* (one per suite
function, generated from its signature) that, after every call, prints a fingerprint of the
call's outputs on one transcript line. The host compares each line with the line the reference
implementation printed for the same call on the same secret-seeded inputs (transcript.py). The
program can read its stdin (seed and nonce) and write anything to stdout, so nothing printed
here is trusted by itself: a line passes only if its fingerprint matches the reference's, which
takes computing the outputs; time comes from the sandbox's CPU accounting of the whole run.

Driver protocol (stdin): ``<nonce> <mode> <calls> <seed>``, mode ``V`` (the suite's own
validation, once) or ``T`` (``calls`` timed calls on fresh inputs each). Transcript lines:

    PA <nonce> C <index> w=<s> c=<s> t=<threads> | <output fingerprints...>
    PA <nonce> V <0|1>            (the suite's own validation verdict, mode V)
    PA <nonce> END <calls>

``w``/``c`` are the call's in-process wall/CPU time and ``t`` the thread count after the call:
diagnostics (the candidate could fake them), never the score.
"""
from __future__ import annotations

# Included first by every driver TU: the standard headers (so the suite's own #includes and
# the rand() redirection below see them already parsed), the PRNG and the fingerprints.
PRELUDE = r"""
#include <algorithm>
#include <array>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <queue>
#include <random>
#include <string>
#include <type_traits>
#include <vector>
#include <dirent.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>
%(extra_includes)s

namespace {
// splitmix64 seeded per call from the run's secret seed: the suite's inputs (rand()) and the
// fingerprint's sample positions/weights come from here, not from libc (which the candidate
// could interpose).
uint64_t perfalign_state = 0, perfalign_fp_state = 0, perfalign_nonce = 0, perfalign_seed_value = 0;
int perfalign_rank = 0;
long perfalign_call = 0, perfalign_calls = 0;
double perfalign_t_wall = 0, perfalign_t_cpu = 0;

inline uint64_t perfalign_mix(uint64_t& s) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
inline double perfalign_unit(uint64_t r) { return (double)(r >> 11) * 0x1.0p-53; }
// murmur3's 32-bit finalizer: the per-element generator of the fast fills (vectorizes; the
// per-fill key comes from splitmix64, so the inputs still follow from the secret seed alone)
inline uint32_t perfalign_fmix32(uint32_t h) {
    h ^= h >> 16; h *= 0x85EBCA6BU; h ^= h >> 13; h *= 0xC2B2AE35U; h ^= h >> 16; return h;
}
// 32 random bits for element i of a fill keyed by (k0, k1)
inline uint32_t perfalign_bits(uint32_t i, uint32_t k0, uint32_t k1) {
    return perfalign_fmix32(i * 0x9E3779B9U + k0) ^ k1;
}
// Per-call overhead (input generation, fingerprints) is what every timing subtracts, and its
// noise is what a timing cannot tell from the work: the hot loops get an AVX2 clone, picked at
// load time where the CPU has it.
#define PERFALIGN_HOT __attribute__((target_clones("avx2", "default")))
// rand(): the suites call it once per element (graphs, bools, strings, shuffles), so it hands out
// a block of values made like a fill's (a key per block from the PRNG, then the per-element
// hash, vectorized) instead of running splitmix64's serial chain per call. [0, RAND_MAX].
const unsigned PERFALIGN_RAND_BLOCK = 512;
alignas(32) uint32_t perfalign_rand_block[PERFALIGN_RAND_BLOCK];
unsigned perfalign_rand_at = PERFALIGN_RAND_BLOCK;
PERFALIGN_HOT void perfalign_rand_refill() {
    const uint64_t key = perfalign_mix(perfalign_state);
    const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (unsigned i = 0; i < PERFALIGN_RAND_BLOCK; ++i)
        perfalign_rand_block[i] = perfalign_bits(i, k0, k1) >> 1;
    perfalign_rand_at = 0;
}
inline int perfalign_rand() {
    if (__builtin_expect(perfalign_rand_at == PERFALIGN_RAND_BLOCK, 0)) perfalign_rand_refill();
    return (int)perfalign_rand_block[perfalign_rand_at++];
}
void perfalign_reseed(long index) {
    uint64_t s = perfalign_seed_value ^ (0xD1B54A32D192ED03ULL * (uint64_t)(index + 1));
    perfalign_state = perfalign_mix(s);
    perfalign_fp_state = perfalign_mix(s);
    perfalign_rand_at = PERFALIGN_RAND_BLOCK;  // a call's inputs follow from its seed alone
}
double perfalign_wall_now() {
    timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
double perfalign_cpu_now() {
    rusage u; getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
int perfalign_threads() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d)) if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}
// ------------------------------------------------------------------ the driver sealed
// Before any code of the candidate runs (its unit may run none before the program's start-up:
// sandbox/privatelink.py), every mapping of a file that is not writable (the program's and the
// libraries' code, read-only data and GOTs once RELRO is applied) is sealed (mseal: no mprotect,
// mmap over it, mremap, munmap), and the process made non-dumpable: /proc/self/mem, which writes
// through page protections and seals, is then root's (the sandbox's seccomp filter refuses
// making the process dumpable again). So the driver's per-call path runs the code it was built
// with. Raw system calls: no libc on the way, and no names added to the suite's scope. Best
// effort where there is no mseal (valgrind, older kernels): the failure is ignored.
#if defined(__x86_64__)
inline long perfalign_sys(long n, long a, long b, long c) {
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
void perfalign_seal_line(char* line) {  // "lo-hi perms offset dev inode path"
    unsigned long v[2] = {0, 0};
    int k = 0;
    for (; *line && k < 2; ++line) {
        const char c = *line;
        if (c == '-' || c == ' ') { ++k; continue; }
        v[k] = v[k] * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
    }
    const bool writable = line[0] && line[1] == 'w';
    char* path = line;
    for (int fields = 0; *path && fields < 4; ++path) if (*path == ' ') { ++fields; while (path[1] == ' ') ++path; }
    if (!writable && v[1] > v[0] && (*path == '/' || __builtin_strncmp(path, "[vdso]", 6) == 0))
        perfalign_sys(462 /* mseal */, (long)v[0], (long)(v[1] - v[0]), 0);
}
void perfalign_seal(int, char**, char**) {
    perfalign_sys(157 /* prctl */, 4 /* PR_SET_DUMPABLE */, 0, 0);
    static char maps[1 << 18];
    const long fd = perfalign_sys(257 /* openat */, -100 /* AT_FDCWD */, (long)"/proc/self/maps",
                                  0x80000 /* O_CLOEXEC */);
    if (fd < 0) return;
    const long room = (long)sizeof maps - 1;
    long n = 0, r;
    while (n < room && (r = perfalign_sys(0 /* read */, fd, (long)(maps + n), room - n)) > 0) n += r;
    perfalign_sys(3 /* close */, fd, 0, 0);
    maps[n > 0 ? n : 0] = 0;
    for (char *line = maps, *end; *line; line = end + 1) {
        for (end = line; *end && *end != '\n'; ++end) {}
        const bool last = !*end;
        *end = 0;
        perfalign_seal_line(line);
        if (last) break;
    }
}
// .preinit_array: before every constructor, the libraries' and the candidate's
__attribute__((section(".preinit_array"), used)) void (*perfalign_seal_first)(int, char**, char**) = perfalign_seal;
#endif
template <class It> void perfalign_shuffle(It first, It last) {  // std::random_shuffle on our PRNG
    for (auto i = (last - first) - 1; i > 0; --i) std::swap(first[i], first[perfalign_rand() %% (i + 1)]);
}

// ------------------------------------------------------------------ fingerprints
const int PERFALIGN_SAMPLES = 32;
uint64_t perfalign_hash(uint64_t h, const void* p, size_t n) {  // 8 bytes at a time, then the tail
    const unsigned char* b = (const unsigned char*)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w; std::memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL; h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0; std::memcpy(&w, b + i, n - i);
        h = (h ^ w ^ ((uint64_t)(n - i) << 56)) * 0x9E3779B97F4A7C15ULL; h ^= h >> 29;
    }
    return h;
}
// the same over a contiguous range, four independent chains (a 4x shorter dependency chain), then
// the tail and the chains folded in
PERFALIGN_HOT uint64_t perfalign_hash_bytes(uint64_t h, const void* p, size_t n) {
    const unsigned char* b = (const unsigned char*)p;
    uint64_t l[4] = {h, h ^ 0x243F6A8885A308D3ULL, h ^ 0x13198A2E03707344ULL, h ^ 0xA4093822299F31D0ULL};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; ++j) {
            uint64_t w; std::memcpy(&w, b + i + 8 * j, 8);
            l[j] = (l[j] ^ w) * 0x9E3779B97F4A7C15ULL; l[j] ^= l[j] >> 29;
        }
    h = perfalign_hash(l[0], b + i, n - i);
    for (int j = 1; j < 4; ++j) h = perfalign_hash(h, &l[j], 8);
    return h;
}
template <class C, class = void> struct perfalign_contiguous : std::false_type {};
template <class C> struct perfalign_contiguous<C, std::void_t<decltype(std::data(std::declval<const C&>()))>>
    : std::true_type {};
template <class T> struct perfalign_is_complex : std::false_type {};
template <class T> struct perfalign_is_complex<std::complex<T>> : std::true_type {};

void perfalign_fp_real(double v) { std::printf(" d:%%.17g", v); }
// n, sum, sum |x|, a random projection and PERFALIGN_SAMPLES elements at positions drawn per
// call. The projection weighs x[i] by one of 64 coefficients drawn per call (by i mod 64): a
// cheap, vectorizable pass (it is per-call overhead that every timing subtracts).
template <class Get> void perfalign_fp_reals(size_t n, Get get);
// the fingerprint line of n reals from their 64 lane sums, then sampled elements
template <class Get> void perfalign_fp_emit(size_t n, const double* coef, const double* lane_sum,
                                            const double* lane_abs, Get get) {
    double sum = 0, l1 = 0, proj = 0;
    for (int j = 0; j < 64; ++j) { sum += lane_sum[j]; l1 += lane_abs[j]; proj += coef[j] * lane_sum[j]; }
    std::printf(" f:%%zu:%%.17g:%%.17g:%%.17g", n, sum, l1, proj);
    for (int k = 0; k < PERFALIGN_SAMPLES && n > 0; ++k) {
        const size_t at = (size_t)(perfalign_mix(perfalign_fp_state) %% n);
        std::printf("%%c%%zu=%%.17g", k ? ',' : ':', at, get(at));
    }
}
// the same over a sequence visited in order by ``visit(f)`` (f(x) per element), ``get(i)`` for the
// sampled elements only (a 2-D interior is cheap to walk, dear to index)
template <class Visit, class Get> void perfalign_fp_walk(size_t n, Visit visit, Get get) {
    double coef[64], lane_sum[64] = {0}, lane_abs[64] = {0};
    for (int j = 0; j < 64; ++j) coef[j] = perfalign_unit(perfalign_mix(perfalign_fp_state)) - 0.5;
    size_t i = 0;
    visit([&](double x) { lane_sum[i & 63] += x; lane_abs[i & 63] += std::fabs(x); ++i; });
    perfalign_fp_emit(n, coef, lane_sum, lane_abs, get);
}
template <class Get> void perfalign_fp_reals(size_t n, Get get) {
    double coef[64], lane_sum[64] = {0}, lane_abs[64] = {0};
    for (int j = 0; j < 64; ++j) coef[j] = perfalign_unit(perfalign_mix(perfalign_fp_state)) - 0.5;
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 64; ++j) { const double x = get(i + j); lane_sum[j] += x; lane_abs[j] += std::fabs(x); }
    for (; i < n; ++i) { const double x = get(i); lane_sum[i %% 64] += x; lane_abs[i %% 64] += std::fabs(x); }
    perfalign_fp_emit(n, coef, lane_sum, lane_abs, get);
}
template <class T> void perfalign_fp(const T& v);
template <class C> void perfalign_fp_container(const C& v) {
    using E = typename std::decay<decltype(*std::begin(v))>::type;
    const size_t n = (size_t)std::distance(std::begin(v), std::end(v));
    if constexpr (std::is_floating_point<E>::value) {
        perfalign_fp_reals(n, [&](size_t i) { return (double)*(std::begin(v) + i); });
    } else if constexpr (perfalign_is_complex<E>::value) {
        perfalign_fp_reals(2 * n, [&](size_t i) {
            const auto z = *(std::begin(v) + i / 2); return (double)(i %% 2 ? z.imag() : z.real()); });
    } else if constexpr (std::is_same<E, std::string>::value) {
        uint64_t h = 1469598103934665603ULL;
        for (const auto& s : v) { h = perfalign_hash(h, s.data(), s.size()); h = perfalign_hash(h, "\0", 1); }
        std::printf(" h:%%zu:%%016llx", n, (unsigned long long)h);
    } else if constexpr (perfalign_contiguous<C>::value && std::is_trivially_copyable<E>::value) {
        // integers, plain structs of exact values in one block: every byte counts
        const uint64_t h = perfalign_hash_bytes(1469598103934665603ULL, std::data(v), n * sizeof(E));
        std::printf(" h:%%zu:%%016llx", n, (unsigned long long)h);
    } else {  // the same element by element (std::vector<bool>, lists, maps)
        uint64_t h = 1469598103934665603ULL;
        for (auto it = std::begin(v); it != std::end(v); ++it) { E e = *it; h = perfalign_hash(h, &e, sizeof e); }
        std::printf(" h:%%zu:%%016llx", n, (unsigned long long)h);
    }
}
template <class T> void perfalign_fp(const T& v) {
    if constexpr (std::is_floating_point<T>::value) perfalign_fp_real((double)v);
    else if constexpr (std::is_integral<T>::value) std::printf(" i:%%lld", (long long)v);
    else if constexpr (perfalign_is_complex<T>::value) { perfalign_fp_real(v.real()); perfalign_fp_real(v.imag()); }
    else perfalign_fp_container(v);
}
// ParEval's stencil checks skip the boundary: so do these (1-D: [1, n-1), 2-D: N x N interior)
template <class V> void perfalign_fp_interior1d(const V& v) {
    const size_t n = v.size();
    perfalign_fp_reals(n > 2 ? n - 2 : 0, [&](size_t i) { return (double)v[i + 1]; });
}
template <class V> void perfalign_fp_interior2d(const V& v, size_t N) {
    const size_t m = N > 2 ? N - 2 : 0;
    using E = typename V::value_type;
    if constexpr (std::is_floating_point<E>::value) {
        perfalign_fp_walk(m * m, [&](auto f) {
            for (size_t r = 1; r <= m; ++r) for (size_t c = 1; c <= m; ++c) f((double)v[r * N + c]); },
            [&](size_t k) { return (double)v[(k / m + 1) * N + k %% m + 1]; });
    } else {
        uint64_t h = 1469598103934665603ULL;
        for (size_t r = 1; r <= m; ++r) for (size_t c = 1; c <= m; ++c) {
            E e = v[r * N + c]; h = perfalign_hash(h, &e, sizeof e); }
        std::printf(" h:%%zu:%%016llx", m * m, (unsigned long long)h);
    }
}
template <class V> void perfalign_fp_sorted(const V& v) {  // order-free outputs (a convex hull)
    V c(v);
    std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return std::memcmp(&a, &b, sizeof a) < 0; });
    perfalign_fp(c);
}
bool perfalign_root() { return perfalign_rank == 0; }
void perfalign_call_begin() { perfalign_t_wall = perfalign_wall_now(); perfalign_t_cpu = perfalign_cpu_now(); }
void perfalign_call_end() {
    const double w = perfalign_wall_now() - perfalign_t_wall, c = perfalign_cpu_now() - perfalign_t_cpu;
    const int t = perfalign_threads();
    if (perfalign_root())
        std::printf("PA %%llu C %%ld w=%%.9f c=%%.9f t=%%d |", (unsigned long long)perfalign_nonce, perfalign_call,
                    w, c, t);
    ++perfalign_call;
}
void perfalign_line_end() { if (perfalign_root()) std::printf("\n"); }
}  // namespace
"""

# The suite's sources call rand()/srand()/std::random_shuffle: redirect them to the seeded PRNG.
# ParEval's fillRand for the common vector types gets faster overloads (same ranges): input
# generation is per-call overhead that every timing subtracts, so it should be small.
REDIRECT_RAND = r"""
namespace {
// element i of a fill: 32 random bits from (i, a key drawn per fill from the seeded PRNG)
// (31 bits of resolution for reals, as rand() / RAND_MAX gives ParEval)
template <class T> PERFALIGN_HOT void perfalign_fill_real(T* __restrict x, size_t n, double mn, double mx) {
    const uint64_t key = perfalign_mix(perfalign_state);
    const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    const double scale = (mx - mn) * 0x1.0p-31;
    for (size_t i = 0; i < n; ++i)
        x[i] = (T)(mn + scale * (double)(int32_t)(perfalign_bits((uint32_t)i, k0, k1) >> 1));
}
PERFALIGN_HOT void perfalign_fill_int(int* __restrict x, size_t n, int mn, int mx) {
    const uint64_t key = perfalign_mix(perfalign_state);
    const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    const uint32_t range = (uint32_t)((int64_t)mx - mn);
    if (range <= 65536u) {  // 16x16-bit products: stays in 32-bit lanes
        for (size_t i = 0; i < n; ++i)
            x[i] = mn + (int)(((perfalign_bits((uint32_t)i, k0, k1) >> 16) * range) >> 16);
    } else {
        for (size_t i = 0; i < n; ++i)
            x[i] = mn + (int)(((uint64_t)perfalign_bits((uint32_t)i, k0, k1) * range) >> 32);
    }
}
void fillRand(std::vector<double>& x, double mn, double mx) { perfalign_fill_real(x.data(), x.size(), mn, mx); }
void fillRand(std::vector<float>& x, double mn, double mx) { perfalign_fill_real(x.data(), x.size(), mn, mx); }
void fillRand(std::vector<int>& x, int mn, int mx) { perfalign_fill_int(x.data(), x.size(), mn, mx); }
// ParEval's fillRandString (the same lengths and letters), writing each string in place instead
// of building a temporary and copying it in
void fillRandString(std::vector<std::string>& x, size_t minLen, size_t maxLen) {
    for (auto& s : x) {
        s.resize(perfalign_rand() % (maxLen - minLen) + minLen);
        for (auto& c : s) c = (char)('a' + perfalign_rand() % 26);
    }
}
}  // namespace
#define rand() perfalign_rand()
#define srand(s) ((void)(s))
#define random_shuffle(a, b) perfalign_random_shuffle_(a, b)
namespace std { template <class It> void perfalign_random_shuffle_(It a, It b) { perfalign_shuffle(a, b); } }
"""


def observer(function: str, ret: str, params: list[tuple[str, str]], fingerprints: list[str],
             returns_value: bool) -> str:
    """An internal-linkage function with the candidate's signature that calls the candidate (the
    external symbol from the other TU), then prints the call's transcript line. ``params`` are
    (declaration, name) pairs; ``fingerprints`` are C++ statements run after the call, with the
    result in ``perfalign_result``. After it, ``#define <function> perfalign_observe_<function>``
    routes every call of the suite's driver through it."""
    decl = ", ".join(p for p, _ in params)
    args = ", ".join(n for _, n in params)
    call = f"::{function}({args})"  # qualified: a parameter may share the function's name
    body = ["    perfalign_call_begin();",
            f"    auto perfalign_result = {call};" if returns_value else f"    {call};",
            '    asm volatile("" : : : "memory");',
            "    perfalign_call_end();",
            "    if (perfalign_root()) {", *[f"        {fp}" for fp in fingerprints], "    }",
            "    perfalign_line_end();",
            *(["    return perfalign_result;"] if returns_value else [])]
    return (f"namespace {{\n{ret} perfalign_observe_{function}({decl}) {{\n" + "\n".join(body) + "\n}\n}\n"
            f"#define {function} perfalign_observe_{function}\n")


def main_source(*, validate: str, timed_call: str, mpi: bool = False, omp_threads: int | None = None,
                per_call: bool = True) -> str:
    """``main``: read the parameters (rank 0 under MPI, then broadcast), run mode V (the suite's
    validation; ``validate`` must set ``bool perfalign_ok``) or mode T (``timed_call`` on fresh
    inputs, reseeded per call; with ``per_call=False`` it runs once and loops over
    ``perfalign_calls`` itself), and close the transcript."""
    mpi_init = ("    MPI_Init(&argc, &argv);\n    MPI_Comm_rank(MPI_COMM_WORLD, &perfalign_rank);\n" if mpi else "")
    bcast = "    MPI_Bcast(perfalign_params, 4, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);\n" if mpi else ""
    fini = "    MPI_Finalize();\n" if mpi else ""
    threads = f"    omp_set_num_threads({omp_threads});\n" if omp_threads else ""
    loop = (f"        for (long perfalign_i = 0; perfalign_i < calls; ++perfalign_i) {{\n"
            f"            perfalign_reseed(perfalign_i);\n{timed_call}\n        }}") if per_call else timed_call
    return f"""
int main(int argc, char** argv) {{
{mpi_init}    unsigned long long perfalign_params[4] = {{0, 0, 0, 0}};
    if (perfalign_root()) {{
        char m[8] = {{0}};
        if (std::scanf("%llu %7s %llu %llu", &perfalign_params[0], m, &perfalign_params[2], &perfalign_params[3]) == 4)
            perfalign_params[1] = (unsigned long long)(unsigned char)m[0];
    }}
{bcast}    perfalign_nonce = perfalign_params[0];
    const char mode = (char)perfalign_params[1];
    const long calls = perfalign_calls = (long)perfalign_params[2];
    perfalign_seed_value = perfalign_params[3];
    if (mode != 'V' && mode != 'T') return 3;
{threads}    // freed blocks stay mapped: re-creating the inputs of every timed call costs no page faults
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    perfalign_reseed(-1);
    if (mode == 'V') {{
{validate}
        if (perfalign_root()) std::printf("PA %llu V %d\\n", (unsigned long long)perfalign_nonce, perfalign_ok ? 1 : 0);
    }} else {{
{loop}
    }}
    if (perfalign_root()) std::printf("PA %llu END %ld\\n", (unsigned long long)perfalign_nonce, perfalign_call);
    std::fflush(stdout);
{fini}    return 0;
}}
"""


# PolyBench: print_array's fprintf calls are routed here; the values it would print (its own
# output, the reference check) are recorded unformatted, one segment per dumped array.
DUMP_HOOK = r"""
#include <cstdarg>
namespace {
std::vector<double> perfalign_dump_values;
std::vector<size_t> perfalign_dump_marks;
int perfalign_dump_fprintf(FILE*, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (std::strcmp(fmt, DATA_PRINTF_MODIFIER) == 0)
        perfalign_dump_values.push_back((double)va_arg(ap, %(value_type)s));
    else if (std::strncmp(fmt, "begin dump:", 11) == 0) perfalign_dump_marks.push_back(perfalign_dump_values.size());
    va_end(ap);
    return 0;
}
void perfalign_fp_dump() {
    perfalign_dump_marks.push_back(perfalign_dump_values.size());
    for (size_t k = 0; k + 1 < perfalign_dump_marks.size(); ++k) {
        const size_t a = perfalign_dump_marks[k], b = perfalign_dump_marks[k + 1];
        perfalign_fp_reals(b - a, [&](size_t i) { return perfalign_dump_values[a + i]; });
    }
    perfalign_dump_marks.clear();
}
template <class T> void perfalign_perturb(T& x, double scale) {
    if constexpr (std::is_floating_point<T>::value) x = (T)(x * scale);
    else x = (T)(x + (T)(perfalign_mix(perfalign_state) & 1));
}
}  // namespace
"""
