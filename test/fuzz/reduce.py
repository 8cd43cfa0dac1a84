#!/usr/bin/env python3
"""reduce.py: shrink a tile program that fails `tilec run` (a differing program from
make fuzz-diff) while it keeps failing the same way.

    test/fuzz/reduce.py build/fuzz-diff/123.tile [--arch=sm_90a] [--sizes='M=1;M=37'] [-o out.tile]

(an arch gfx90a, gfx942 or gfx1100 runs the HIP target; --target=hip is accepted and implied)

The failure is the first DIFFER line of the report with its numbers blanked (or
the emulation's error message, or the C++ compiler's first error when the emitted
code does not build); a candidate must pass sema and fail with the
same text. Statements (a line ending in ';', or a 'for'/'if' line with its block)
are deleted one at a time, if/else blocks are replaced by one branch, loops by
their body when sema accepts it, and lets by their value; then unused buffer
declarations go and the size sets are cut to one. TILEC (default build/tilec).
"""
import os
import re
import subprocess
import sys
import tempfile

TILEC = os.path.abspath(os.environ.get("TILEC", os.path.join(os.path.dirname(__file__), "../../build/tilec")))


def run(src, sizes, arch, timeout=300):
    with tempfile.NamedTemporaryFile("w", suffix=".tile", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        cmd = [TILEC, "run", path, "--arch=" + arch]
        if arch.startswith("gfx"):
            cmd.append("--target=hip")
        if sizes:
            cmd.append("--sizes=" + sizes)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return -1, "timeout"
    finally:
        os.unlink(path)


def signature(rc, out):
    if rc == 3 and "could not build" in out:
        m = re.search(r"kernel\.cpp:\d+:\d+: error: (.*)", out)
        s = "build: " + (m.group(1) if m else "?")
        return re.sub(r"\d+", "#", s)
    if rc != 1:
        return None
    m = re.search(r"DIFFER: (.*)", out)
    if m:
        s = m.group(1)
    else:
        m = re.search(r"DIFFER\n\s*\S+ (\w+)\[", out)
        s = "tensor " + (m.group(1) if m else "?")
        s = re.sub(r"\[.*", "", s)
    s = re.sub(r"\(block [^)]*\)", "", s)
    s = re.sub(r"'[^']*'", "'*'", s)
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", s).strip()


def units(lines):
    """(start, end) line ranges of statements inside the kernel body, innermost last"""
    out = []
    stack = []
    body = False
    for i, l in enumerate(lines):
        t = l.strip()
        if not body:
            if t == "{":
                body = True
            continue
        if t.startswith("}") and stack:
            start = stack.pop()
            if t.endswith("{"):  # } else {
                stack.append(start)
                continue
            out.append((start, i))
            continue
        if t.endswith("{"):
            stack.append(i)
        elif t.endswith(";"):
            out.append((i, i))
    return out


def main():
    args = sys.argv[1:]
    path = None
    arch = "sm_80"
    sizes = None
    outp = None
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--arch="):
            arch = a.split("=", 1)[1]
        elif a.startswith("--sizes="):
            sizes = a.split("=", 1)[1]
        elif a in ("--target=hip", "--target=cuda"):
            pass  # the arch says which
        elif a == "-o":
            outp = args[i + 1]
            i += 1
        else:
            path = a
        i += 1
    src = open(path).read()
    if sizes is None:
        m = re.search(r"^// sizes: (.*)$", src, re.M)
        sizes = m.group(1) if m else None
    m = re.search(r"^// progen seed=(\d+)", src, re.M)
    if m and "--arch" not in " ".join(args) and int(m.group(1)) % 4 == 3:
        arch = "sm_90a"
    rc, out = run(src, sizes, arch)
    sig = signature(rc, out)
    if not sig:
        print("the program does not fail (exit %d):\n%s" % (rc, out[-2000:]))
        return 1
    print("failure:", sig)
    # the first size set that fails
    if sizes and ";" in sizes:
        for s in sizes.split(";"):
            if signature(*run(src, s, arch)) == sig:
                sizes = s
                break
    lines = src.split("\n")

    def ok(cand):
        return signature(*run("\n".join(cand), sizes, arch)) == sig

    changed = True
    while changed:
        changed = False
        us = units(lines)
        for (a, b) in sorted(us, key=lambda u: -(u[1] - u[0])):
            if b >= len(lines):
                continue
            cand = lines[:a] + lines[b + 1:]
            if ok(cand):
                lines = cand
                changed = True
                break
            t = lines[a].strip()
            if a != b and (t.startswith("if ") or t.startswith("for ")):
                inner = lines[a + 1:b]
                # one branch of an if/else, or a loop's body
                split = [k for k, l in enumerate(inner) if l.strip() == "} else {"]
                tries = [inner] if not split else [inner[:split[0]], inner[split[0] + 1:]]
                for body in tries:
                    cand = lines[:a] + body + lines[b + 1:]
                    if ok(cand):
                        lines = cand
                        changed = True
                        break
                if changed:
                    break
        if not changed:
            # lets replaced by their value, unused declarations removed
            for k, l in enumerate(lines):
                m = re.match(r"(\s*)let (\w+) = (.*);$", l)
                if m:
                    name, val = m.group(2), m.group(3)
                    rest = [re.sub(r"\b%s\b" % name, "(" + val + ")", x) for x in lines[k + 1:]]
                    cand = lines[:k] + rest
                    if ok(cand):
                        lines = cand
                        changed = True
                        break
                m = re.match(r"\s*(shared|local) (\w+):", l)
                if m and not any(re.search(r"\b%s\b" % m.group(2), x) for x in lines[k + 1:]):
                    cand = lines[:k] + lines[k + 1:]
                    if ok(cand):
                        lines = cand
                        changed = True
                        break
    res = "\n".join(lines)
    res = re.sub(r"^// sizes: .*$", "// sizes: " + (sizes or ""), res, flags=re.M)
    if outp:
        open(outp, "w").write(res)
    print(res)
    print("// reduced with --arch=%s --sizes='%s'" % (arch, sizes or ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
