#!/usr/bin/env python3
"""run_all.py: the differential check of test/check_cpu_diff.c on the GPU.

Every program check_cpu_diff runs (samples/, test/cpu/, test/layout/, test/control/), at the
sizes, arch and -D its tables give, through `tilec run --device=gpu` (the emitted CUDA C on
the GPU against the reference interpreter). Programs the tables list as refused must be
refused (exit 3). Prints one line per run and a summary; exit 1 when a run differs or a
refusal is not the listed one. Needs a CUDA driver: run it on the GPU machine, from the
repository root, with build/tilec built. Rows without an arch take GPU_ARCH when set (e.g.
GPU_ARCH=sm_90 for the mma.sync emission on an H100/H200), else the device's (sm_90a).
GPU_JOBS (default 8) runs that many at once; GPU_FLAGS adds tilec flags to every run
(e.g. "--warp-specialize --raster-group=3").
"""
import glob
import os
import re
import subprocess
import sys

TILEC = os.environ.get("TILEC", "build/tilec")
src = open("test/check_cpu_diff.c").read()
STR = r'"(?:[^"\\]|\\.)*"'
# the tables' string macros (#define NAME "..." "...", continued lines), expanded as C would
macros = {}
for m in re.finditer(r"^#define (\w+) ((?:%s\s*(?:\\\n\s*)?)+)$" % STR, src, re.M):
    macros[m.group(1)] = re.sub(r"\\\n", " ", m.group(2))


def table(name):
    body = src[src.index(name):]
    body = body[:body.index("};")]
    rows = []
    for m in re.finditer(r"\{([^{}]*)\},", body):
        text = re.sub(r"\b(\w+)\b", lambda w: macros.get(w.group(1), w.group(1)), m.group(1))
        fields = []
        for f in re.split(r",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", text):
            f = f.strip()
            if f == "NULL":
                fields.append(None)
            elif not re.fullmatch(r"(?:%s\s*)+" % STR, f):
                sys.exit("run_all.py: %s row {%s}: field '%s' is not a string, a string macro or NULL"
                         % (name, m.group(1).strip(), f))
            else:
                # adjacent literals concatenate
                fields.append("".join(x[1:-1] for x in re.findall(STR, f)))
        rows.append(fields)
    return rows


special = {}
for r in table("special[] = {"):
    special.setdefault(r[0], r)  # the first row of a file is the one check_cpu_diff runs
extra = table("extra[] = {")
for name, rows, n in (("special", list(special.values()), 5), ("extra", extra, 4)):
    for r in rows:
        if len(r) != n:
            sys.exit("run_all.py: a %s row has %d fields, not %d: %s" % (name, len(r), n, r))
generic = "*=1;*=37;"
files = []
for pat in ("test/cpu/*.tile", "samples/*.tile", "test/layout/*.tile", "test/control/*.tile"):
    files += sorted(glob.glob(pat))

jobs = []  # (file, sizes, arch, define, refused)
check_only = sys.argv[1:] == ["--check-tables"]
for f in files:
    if f in special:
        _, sizes, arch, define, refused = special[f]
        jobs.append((f, sizes or generic, arch, define, refused))
    else:
        jobs.append((f, generic, None, None, None))
for f, arch, sizes, define in extra:
    jobs.append((f, sizes or generic, arch, define, None))

if check_only:
    # make test (test/cli.sh): the tables parse as check_cpu_diff reads them
    print("run_all.py: %d jobs from %d special and %d extra rows" % (len(jobs), len(special), len(extra)))
    sys.exit(0)
# the runs in parallel (GPU_JOBS processes, default 8): each is NVRTC, the interpreter and a
# launch; the report keeps the tables' order
def run_job(job):
    f, sizes, arch, define, want_refusal = job
    cmd = [TILEC, "run", "--device=gpu", "--sizes", sizes]
    if arch == "sm_80" and not os.environ.get("GPU_RUN_SM80"):
        # an H100/H200 loads no sm_80 cubin; the rows name sm_80 for the CPU check's default
        arch = None
    arch = arch or os.environ.get("GPU_ARCH")
    if arch:
        cmd.append("--arch=" + arch)
    if define:
        cmd += ["-D", define]
    cmd += EXTRA_FLAGS
    cmd.append(f)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        return cmd, p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return cmd, 124, "timed out after 600 s"


import concurrent.futures
EXTRA_FLAGS = os.environ.get("GPU_FLAGS", "").split()
agree = differ = refused = bad = runs = 0
with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("GPU_JOBS", "8"))) as ex:
    results = list(ex.map(run_job, jobs))
for (f, sizes, arch, define, want_refusal), (cmd, rc, out) in zip(jobs, results):
    tag = " ".join(cmd[2:])
    if want_refusal:
        ok = rc == 3 and want_refusal in out
        refused += ok
        bad += not ok
        print(("refused as listed: " if ok else "NOT REFUSED AS LISTED: ") + tag)
        if not ok:
            print(out[-2000:])
        continue
    n = len(re.findall(r"seed \d+: ", out))
    runs += n
    if rc == 0:
        agree += 1
        print("agree (%d runs): %s" % (n, tag))
    else:
        differ += rc == 1
        bad += rc != 1
        print("%s (exit %d): %s" % ("DIFFER" if rc == 1 else "ERROR", rc, tag))
        print(out[-3000:])
print("run_all: %d programs and runs of the tables, %d agree, %d differ, %d refused as listed, "
      "%d other failures; %d size sets run on the GPU" % (len(jobs), agree, differ, refused, bad, runs))
sys.exit(1 if differ or bad else 0)
