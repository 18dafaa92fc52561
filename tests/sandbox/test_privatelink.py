"""The private link checked by its result (sandbox/privatelink.py, run here directly, no sandbox):
a confined unit's definitions of names the trusted unit or libc's callers use stay its own,
however they are made (section, binding, type, asm), and what cannot be renamed fails the build."""
import json
import subprocess
import sys

import pytest

from perfalign.sandbox import privatelink, toolchains

# the trusted unit: every libc function and variable it uses shows whose definition it got
MAIN = r"""#include <cstdio>
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>
int work(int);
int main() {
    rusage u{};
    const int r = getrusage(RUSAGE_SELF, &u);
    DIR* d = opendir("/");
    std::printf("%d %d %d %d\n", work(20), d != nullptr, r == 0 && u.ru_maxrss > 0, optind);
}
"""
REAL = "21 1 1 1\n"  # what libc's own definitions print
WORK = 'int work(int x) { return x + 1; }\n'
DECLS = 'struct rusage; struct DIR;\n'

# each would change what MAIN prints if its definition reached the trusted unit (unconfined, the
# tls and absolute ones fail the link instead, and ld merges the common one into libc's)
INTERPOSERS = {
    # the red team's attack: nm prints "P" for a section named .pdata, not a "defined" letter
    "pdata_section": DECLS + """
extern "C" __attribute__((section(".pdata"))) int printf(const char*, ...) { return 0; }
extern "C" __attribute__((section(".pdata"))) int getrusage(int, rusage*) { return 0; }
extern "C" __attribute__((section(".pdata"))) DIR* opendir(const char*) { return nullptr; }
""",
    "custom_sections": DECLS + """
extern "C" __attribute__((section("perfalign_x"))) DIR* opendir(const char*) { return nullptr; }
extern "C" __attribute__((section(".data.rel.ro.x"))) int optind = 42;
""",
    "weak": DECLS + """
extern "C" __attribute__((weak)) int getrusage(int, rusage*) { return 0; }
extern "C" __attribute__((weak)) int optind = 42;
""",
    "gnu_unique": 'asm(".globl optind\\n.type optind, @gnu_unique_object\\n.data\\noptind: .long 42\\n'
                  '.size optind, 4\\n.text");\n',
    "tls": 'extern "C" __thread int optind = 42;\n',
    "common": 'asm(".comm optind, 4, 4");\n',
    "absolute": 'asm(".globl opendir\\n.set opendir, 0");\n',
    "asm_globl_custom_section": 'asm(".section .pdata.evil,\\"ax\\",@progbits\\n.globl getrusage\\n'
                                '.type getrusage,@function\\ngetrusage: xor %eax,%eax\\n ret\\n.previous");\n',
    "alias": DECLS + """
extern "C" int perfalign_quiet(const char*, ...) { return 0; }
extern "C" int printf(const char*, ...) __attribute__((alias("perfalign_quiet")));
extern "C" DIR* perfalign_none(const char*) { return nullptr; }
extern "C" DIR* opendir(const char*) __attribute__((weak, alias("perfalign_none")));
""",
    "symver": 'extern "C" int perfalign_q(int, void*) { return 0; }\n'
              'asm(".symver perfalign_q, getrusage@@GLIBC_2.2.5");\n',
}

# code that would run before the trusted unit's start-up code (where the probe's driver seals its
# memory): the build refuses it
EARLY = {
    "ifunc": DECLS + """
extern "C" int perfalign_zero(int, rusage*) { return 0; }
extern "C" void* perfalign_pick() { return (void*)perfalign_zero; }
extern "C" int getrusage(int, rusage*) __attribute__((ifunc("perfalign_pick")));
""",
    "local_ifunc": """extern "C" {
static int one() { return 1; }
static void* pick() { return (void*)one; }
}
static int f() __attribute__((ifunc("pick")));
int work(int x) { return x + f(); }
""",
    "target_clones": '__attribute__((target_clones("avx2", "default"))) int work(int x) { return x + 1; }\n',
    "preinit_array": """static void first(int, char**, char**) {}
__attribute__((section(".preinit_array"), used)) static void (*run_first)(int, char**, char**) = first;
""",
    "preinit_array_asm": 'asm(".section .preinit_array.1,\\"aw\\"\\n.quad 0\\n.previous");\n',
}

# the honest twin: a unit that uses the library (streams, containers, templates, statics, TLS)
HONEST = r"""#include <iostream>
#include <map>
#include <string>
#include <vector>
static std::vector<int> table = {1, 2, 3};
thread_local int calls = 0;
template <class T> T twice(T x) { return 2 * x; }
int work(int x) {
    static std::map<std::string, int> seen;
    seen[std::to_string(x)] += ++calls;
    if (x < 0) std::cerr << "negative\n";
    return twice(x) - x + table[0];
}
"""


def build(tmp_path, unit: str, **spec_changes) -> subprocess.CompletedProcess:
    (tmp_path / "main.cpp").write_text(MAIN)
    (tmp_path / "unit.cpp").write_text(unit if "int work(" in unit else unit + WORK)
    argv = ["/usr/bin/g++", "-O2", "-o", str(tmp_path / "prog"), str(tmp_path / "main.cpp")]
    units = [(str(tmp_path / "main.cpp"), None), (str(tmp_path / "unit.cpp"), ("work",))]
    cmd = toolchains.private_link_argv(argv, units)
    spec = json.loads(cmd[-1]) | spec_changes
    return subprocess.run([sys.executable, *cmd[1:-1], json.dumps(spec)], capture_output=True, text=True)


def run(tmp_path) -> str:
    return subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=30).stdout


def test_the_honest_unit_links_and_keeps_its_function(tmp_path):
    p = build(tmp_path, HONEST)
    assert p.returncode == 0, p.stderr
    assert run(tmp_path) == REAL


@pytest.mark.parametrize("name", sorted(INTERPOSERS))
def test_interposers_stay_in_their_unit(tmp_path, name):
    p = build(tmp_path, INTERPOSERS[name])
    assert p.returncode == 0, (name, p.stderr)
    assert "kept private" in p.stderr, p.stderr
    assert run(tmp_path) == REAL, (name, p.stderr)  # the trusted unit got libc's definitions


@pytest.mark.parametrize("name", sorted(EARLY))
def test_code_before_the_program_starts_fails_the_build(tmp_path, name):
    p = build(tmp_path, EARLY[name])
    assert p.returncode != 0 and "before the program starts" in p.stderr, (name, p.stderr)
    assert not (tmp_path / "prog").exists()


def test_the_object_is_read_whatever_the_section(tmp_path):
    """The reader sees the .pdata definitions nm's letters hid (the red team's attack)."""
    (tmp_path / "u.cpp").write_text(INTERPOSERS["pdata_section"] + INTERPOSERS["common"] + WORK)
    obj = tmp_path / "u.o"
    subprocess.run(["/usr/bin/g++", "-O2", "-c", "-o", str(obj), str(tmp_path / "u.cpp")], check=True)
    assert {"printf", "getrusage", "opendir", "optind", "_Z4worki"} <= set(privatelink.defined_globals(str(obj)))
    assert privatelink.leftovers(str(obj), {"_Z4worki"}) == ["getrusage", "opendir", "optind", "printf"]


def test_a_definition_left_visible_fails_the_build(tmp_path):
    """The check on the result, not on the renaming: with a renamer that renames nothing, the
    build fails and names what would have leaked."""
    p = build(tmp_path, INTERPOSERS["pdata_section"], objcopy="/bin/true")
    assert p.returncode != 0 and not (tmp_path / "prog").exists()
    assert "would be visible" in p.stderr and "'getrusage'" in p.stderr and "'printf'" in p.stderr, p.stderr


def test_a_name_that_cannot_be_renamed_fails_the_build(tmp_path):
    p = build(tmp_path, 'asm(".globl \\"get rusage\\"\\n\\"get rusage\\": ret");\n')
    assert p.returncode != 0 and "would be visible" in p.stderr and "get rusage" in p.stderr, p.stderr


def test_not_an_elf_object_fails_the_build(tmp_path):
    obj = tmp_path / "x.o"
    obj.write_bytes(b"!<arch>\n")
    with pytest.raises(ValueError, match="not a 64-bit"):
        privatelink.defined_globals(str(obj))
