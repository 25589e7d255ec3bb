#!/usr/bin/python3
"""No AVX or AVX-512 instruction can be reached from a portable build's baseline code (issue 31).

    isa_objects_check.py BINARY ISA=OBJECT [ISA=OBJECT ...]

BINARY is an executable of a portable tree (onnxlens-cli); each OBJECT is a per-ISA kernel object
the engine links (engine/CMakeLists.txt: build/portable/engine/isa/onnxlens_kernels_<isa>.o).
Checks:
1. each object keeps one global symbol, its entry onnxlens_isa_families_<isa>: every inline
   function and template instantiation in it is local, so the final link cannot pick its copy
   for another object's call (GNU_UNIQUE data, function-local statics of inline functions, stays
   shared: data is not code);
2. every function of BINARY holding a VEX- or EVEX-encoded instruction (AVX, AVX2, FMA, F16C,
   AVX-512) is a local symbol defined in one of the objects, and every one holding an
   EVEX-encoded instruction (AVX-512) is one of the avx512* objects'. The baseline (x86-64-v2)
   has no VEX encoding at all, so any other hit is per-ISA code reachable without the dispatch;
3. the objects' static initializers (run at start on every CPU, before the dispatch: <iostream>'s
   ios_base::Init, namespace-scope objects) and the functions of the object they call hold no
   VEX or EVEX instruction.
Prints the counts; exits 1 with the offending functions listed.
"""
import collections
import re
import subprocess
import sys

PREFIXES = {"66", "67", "f2", "f3", "2e", "3e", "26", "36", "64", "65", "f0"}


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout


def symbols(path, by_address=False):
    """name (or (name, address)) -> set of nm types, for defined symbols."""
    out = collections.defaultdict(set)
    for line in run(["nm", "--defined-only", path]).splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3:
            out[(parts[2], int(parts[0], 16)) if by_address else parts[2]].add(parts[1])
    return out


def encoding(byte_text):
    """'vex', 'evex' or None for one instruction's bytes ('c5 f8 77')."""
    bytes_ = byte_text.split()
    while bytes_ and bytes_[0] in PREFIXES:
        bytes_ = bytes_[1:]
    if not bytes_:
        return None
    if bytes_[0] == "62":
        return "evex"
    if bytes_[0] in ("c4", "c5"):
        return "vex"
    return None


def disassemble(path, calls=None):
    """function name -> 'vex' or 'evex' (the widest seen) for every function holding either; with
    `calls` (a dict), also fills function name -> the names it calls."""
    found = {}
    current = None
    header = re.compile(r"^([0-9a-f]+) <(.+)>:$")
    call = re.compile(r"\bcall\s+[0-9a-f]+ <([^>+]+)")
    proc = subprocess.Popen(["objdump", "-d", "-w", "-r", path], stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        m = header.match(line)
        if m:
            # In BINARY a name may have two copies (the baseline's global one and an object's
            # local one): functions are told apart by address.
            current = m.group(2) if calls is not None else (m.group(2), int(m.group(1), 16))
            continue
        if calls is not None and current is not None:
            # In a relocatable object the callee is the relocation's symbol on the next line.
            r = re.search(r"R_X86_64_(PLT32|PC32)\s+([^+\s]+)", line)
            c = call.search(line)
            if r:
                calls.setdefault(current, set()).add(r.group(2))
            elif c:
                calls.setdefault(current, set()).add(c.group(1))
        parts = line.split("\t")
        if current is None or len(parts) < 3:
            continue
        kind = encoding(parts[1])
        if kind and found.get(current) != "evex":
            found[current] = kind
    if proc.wait() != 0:
        raise SystemExit("objdump failed on " + path)
    return found


def simd_functions(binary):
    return disassemble(binary)


def static_initializer_problems(path):
    """The object's static initializers run at program start on every CPU, before any dispatch:
    they and the functions of the object they call must hold no VEX or EVEX instruction."""
    calls = {}
    simd = disassemble(path, calls)
    todo = [f for f in calls if f.startswith(("_GLOBAL__sub_I_", "_GLOBAL__sub_D_"))]
    todo += [f for f in simd if f.startswith(("_GLOBAL__sub_I_", "_GLOBAL__sub_D_"))]
    seen, problems = set(), []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if f in simd:
            problems.append("%s: static initialization reaches %s, which has %s instructions" % (path, f, simd[f]))
        todo.extend(calls.get(f, ()))
    return problems, len(seen)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    objects = dict(arg.split("=", 1) for arg in sys.argv[2:])
    problems = []
    local_functions = {}
    for isa, path in objects.items():
        syms = symbols(path)
        # GNU_UNIQUE ('u': function-local statics of inline functions, e.g. Eigen's cache sizes)
        # stay shared with the baseline's copy: data, never code, and one instance is right.
        globals_ = sorted(n for n, t in syms.items() if any(c.isupper() or c == "i" for c in t))
        if globals_ != ["onnxlens_isa_families_" + isa]:
            problems.append("%s keeps global symbols %s" % (path, globals_[:10]))
        for name, types in syms.items():
            if "t" in types:
                local_functions.setdefault(name, set()).add(isa)
    initializers = 0
    for path in objects.values():
        found, count = static_initializer_problems(path)
        problems += found
        initializers += count
    binary_syms = symbols(binary, by_address=True)
    simd = simd_functions(binary)
    counts = collections.Counter(simd.values())
    for (name, address), kind in sorted(simd.items()):
        types = binary_syms.get((name, address), set())
        owners = local_functions.get(name, set())
        if any(c.isupper() or c in "ui" for c in types):
            problems.append("%s (%s) has %s instructions and a global copy %s" % (name, binary, kind, types))
        elif not owners:
            problems.append("%s (%s) has %s instructions outside the per-ISA objects" % (name, binary, kind))
        elif kind == "evex" and not any(o.startswith("avx512") for o in owners):
            problems.append("%s (%s) has AVX-512 instructions outside the avx512 objects" % (name, binary))
    print("%s: %d functions with VEX (AVX/AVX2/FMA) and %d with EVEX (AVX-512) instructions, all local "
          "to the per-ISA objects %s; their static initialization (%d functions) has none"
          % (binary, counts["vex"], counts["evex"], ", ".join(objects), initializers)
          if not problems else "%d problems" % len(problems))
    for p in problems[:50]:
        print("  " + p, flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
