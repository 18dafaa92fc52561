"""Static checks of a candidate's source before it is built: external libraries and the
optimization techniques it uses.

"Library violation" (the tier table of arXiv 2602.12049 as reviewed): calling BLAS or any
external math library. Checked twice: here on the source (headers, known symbols, dynamic
loading), and at link time (``link_violation``: the trusted link adds no library, so a call that
slipped past the source check is an undefined reference to a library symbol, which the build's
message names).

Technique detection (OpenMP, SIMD, blocking, unrolling) is this package's design, a documented
heuristic over the preprocessor-free text: pragmas and intrinsics are exact; blocking is a loop
stepping by a tile (``+= T`` with T a name or a constant >= 4).
"""
from __future__ import annotations

import re

TECHNIQUES = ("openmp", "simd", "blocking", "unroll")

_LIB_HEADERS = re.compile(r"#\s*include\s*[<\"]\s*(cblas|blas|lapack|lapacke|mkl\w*|openblas\w*|f77blas|"
                          r"eigen\w*|Eigen/\w+|armadillo|gsl/\w+|fftw\w*|atlas\w*|blis\w*|cublas\w*|"
                          r"accelerate\w*|numpy/\w+|Python)\b[^>\"]*[>\"]", re.I)
# symbols of BLAS/LAPACK/MKL/GSL/Eigen-like libraries, and ways to reach any library at run time
_LIB_SYMBOLS = re.compile(r"\b(cblas_\w+|[sdcz](gemm|gemv|syrk|symm|trmm|trsm|axpy|dot|scal|copy|ger)_?\s*\(|"
                          r"LAPACKE_\w+|mkl_\w+|openblas_\w+|bli_\w+|gsl_\w+|Eigen::|arma::|"
                          r"dlopen|dlsym|dlmopen|__libc_dlopen\w*|RTLD_\w+|syscall\s*\(|execv\w*|execl\w*|"
                          r"system\s*\(|popen\s*\(|fork\s*\()")
_LINK_UNDEFINED = re.compile(r"undefined reference to [`'\"]([\w:@.]+)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def strip_comments(code: str) -> str:
    return _COMMENT.sub(" ", code)


def library_violation(code: str) -> str | None:
    """Why ``code`` uses an external library (None if it does not): a library header, a
    BLAS/LAPACK/... symbol, dynamic loading or process creation (a way around the link check)."""
    text = strip_comments(code)
    m = _LIB_HEADERS.search(text)
    if m:
        return f"external library header {m.group(0).strip()!r}"
    m = _LIB_SYMBOLS.search(text)
    if m:
        # the task's own function is named dgemm: a definition or call of it is not a library
        sym = m.group(0).rstrip("( ").strip()
        if not re.fullmatch(r"dgemm", sym):
            return f"external library symbol {sym!r}"
    return None


def link_violation(build_message: str, own_symbols: tuple[str, ...] = ()) -> str | None:
    """Library violation seen at link: an undefined reference the trusted link (no -l flags, libm
    and the C/C++ runtime only) cannot resolve is a library call (``own_symbols`` are the
    harness's, whose absence is a compile error, not a violation)."""
    for sym in _LINK_UNDEFINED.findall(build_message or ""):
        base = sym.split("(")[0]
        if base not in own_symbols:
            return f"undefined reference to {base!r} at link (an external library call)"
    return None


def detect_techniques(code: str) -> frozenset[str]:
    """The optimization techniques ``code`` uses, from :data:`TECHNIQUES`."""
    text = strip_comments(code)
    found = set()
    if re.search(r"#\s*pragma\s+omp\s+(parallel|for|task|sections|teams|distribute)\b", text) or \
            re.search(r"\bomp_(set_num_threads|get_thread_num|get_num_threads)\b"
                      r"|\bstd::thread\b|\bpthread_create\b", text):
        found.add("openmp")
    if re.search(r"#\s*pragma\s+omp\s+(parallel\s+for\s+)?simd\b|#\s*pragma\s+GCC\s+ivdep\b|"
                 r"<\s*[a-z]*intrin\.h\s*>|\b_mm\d*_\w+|\b__m(128|256|512)d?\b|vector_size\s*\(", text):
        found.add("simd")
    if re.search(r"for\s*\([^;]*;[^;]*;\s*\w+\s*\+=\s*([A-Za-z_]\w*|[4-9]|\d{2,})\s*\)", text):
        found.add("blocking")
    if re.search(r"#\s*pragma\s+(GCC\s+)?unroll\b", text):
        found.add("unroll")
    return frozenset(found)


def forbidden_techniques(used: frozenset[str], permitted: frozenset[str]) -> frozenset[str]:
    """Techniques used that the stage does not permit (SQD: a format violation)."""
    return frozenset(used - permitted)
