"""Lines of non-test Python in a commit (or the working tree): total, and code lines (not blank,
not comment-only, not a docstring). tests/, data/ (bundled problems' solutions) and docs/ are
left out. Usage: python3 count_lines.py [REV] [REPO]"""
import ast
import subprocess
import sys

rev = sys.argv[1] if len(sys.argv) > 1 else None
repo = sys.argv[2] if len(sys.argv) > 2 else "."


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def files() -> list[str]:
    names = git("ls-tree", "-r", "--name-only", rev) if rev else git("ls-files", "-co", "--exclude-standard")
    return [f for f in names.split() if f.endswith(".py") and not f.startswith(("tests/", "data/", "docs/"))]


def docstring_lines(source: str) -> set[int]:
    lines: set[int] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return lines
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                    str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


total = code = 0
per: dict[str, list[int]] = {}
for f in files():
    source = git("show", f"{rev}:{f}") if rev else open(f"{repo}/{f}", encoding="utf-8").read()
    lines = source.splitlines()
    skip = docstring_lines(source)
    c = sum(1 for i, line in enumerate(lines, 1)
            if line.strip() and not line.strip().startswith("#") and i not in skip)
    total, code = total + len(lines), code + c
    top = per.setdefault(f.split("/")[0], [0, 0])
    top[0] += len(lines)
    top[1] += c
print(f"total {total}  code {code}")
for k, (a, b) in sorted(per.items()):
    print(f"  {k:12s} {a:6d} {b:6d}")
