#!/bin/bash
# An H200 call (issue 33, after repro7b/): why the reproducer of FlagGems' generated pointwise kernel
# `add_func_kernel_rank_1` (tests/corpus/drivers/flag_gems_use_gems.py) compiles to another cubin than the
# original's run. As h200_repro6.sh: the original runs in Triton cache A (cwd = its folder, as
# validation/repro_gpu.py runs it), irscope writes the reproducers (benchmarks/repro_roundtrip.py --write,
# cache W), each reproducer runs in a cache of its own (B/<name>); then, for each kernel, every stage (.ttir,
# .ttgir, .llir, .ptx, sorted .json) of A's and B's same-named kernel is diffed, and the cubins compared
# (bytes, strings, cuobjdump -elf where Triton ships it). FlagGems' code cache (~/.flaggems, or
# FLAGGEMS_CACHE_DIR) is listed after each run. If the PTX names other files, the reproducer is run again with
# A's file names put in its place (B_fixed/). Needs the corpus wheels:
#   carry [".whl"]; pip install --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site
# Back as $OUT/repro8.tar.gz.
set -u
R=/tmp/irscope-h200/repro8
ROOT=$PWD
F=$ROOT/tests/corpus/drivers/flag_gems_use_gems.py
K=${KERNEL:-add_func_kernel_rank_1}
mkdir -p "$R/A" "$R/W" "$R/B" "$R/repros"
export PYTHONUNBUFFERED=1

main() {
  python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])" > "$R/versions.txt" 2>&1
  git -C "$ROOT" rev-parse HEAD >> "$R/versions.txt" 2>/dev/null
  { echo "HOME=$HOME"; echo "FLAGGEMS_CACHE_DIR=${FLAGGEMS_CACHE_DIR:-}"; env | grep -E '^(TRITON|CUDA|PYTHONPATH)' ; } > "$R/env.txt"
  FG=${FLAGGEMS_CACHE_DIR:-$HOME/.flaggems}
  cd "$(dirname "$F")" || return 1
  # (1) the original, as repro_gpu.py runs it
  TRITON_CACHE_DIR=$R/A timeout 120 python3 "$F" > "$R/original.log" 2>&1; echo "original rc=$?" >> "$R/rc.txt"
  ls -la --time-style=+%T "$FG/code_cache" > "$R/flaggems_after_original.txt" 2>&1
  mkdir -p "$R/gen_original" && cp "$FG"/code_cache/*.py "$R/gen_original/" 2>/dev/null
  # (2) irscope writes the reproducers (on the GPU, as repro_gpu.py does)
  TRITON_CACHE_DIR=$R/W PYTHONPATH=$ROOT:${PYTHONPATH:-} timeout 200 python3 "$ROOT/benchmarks/repro_roundtrip.py" \
    --write "$F" "$R/repros" > "$R/write.log" 2>&1; echo "write rc=$?" >> "$R/rc.txt"
  ls -la --time-style=+%T "$FG/code_cache" > "$R/flaggems_after_write.txt" 2>&1
  # (3) each reproducer, plain Python, a cache of its own
  for r in "$R"/repros/*.py; do
    [ -f "$r" ] || continue
    n=$(basename "$r" .py)
    echo "== $n" >> "$R/repros.log"
    TRITON_CACHE_DIR=$R/B/$n timeout 60 python3 "$r" >> "$R/repros.log" 2>&1; echo "$n rc=$?" >> "$R/rc.txt"
  done
  # (4) the diffs, and a reproducer with A's file names where its PTX names others
  timeout 120 python3 "$R/analyze.py" "$R" "$K" "$(dirname "$F")" > "$R/diffs.txt" 2>&1; echo "analyze rc=$?" >> "$R/rc.txt"
}

cat > "$R/analyze.py" <<'EOF'
import difflib, glob, hashlib, json, os, re, shutil, subprocess, sys

R, K, CWD = sys.argv[1], sys.argv[2], sys.argv[3]


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cubins(cache):
    return {sha(p): p for p in glob.glob(os.path.join(cache, "**", "*.cubin"), recursive=True)}


def text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def show_diff(a, b, label, limit=80):
    ta, tb = text(a), text(b)
    if ta is None or tb is None:
        print(f"--- {label}: missing ({a if ta is None else b})")
        return
    if label.endswith(".json"):
        ta = json.dumps(json.loads(ta), indent=1, sort_keys=True) + "\n"
        tb = json.dumps(json.loads(tb), indent=1, sort_keys=True) + "\n"
    if ta == tb:
        print(f"--- {label}: identical ({len(ta)} chars)")
        return
    d = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), "A/" + label, "B/" + label, n=1, lineterm=""))
    print(f"--- {label}: DIFFERS ({sum(l.startswith(('+', '-')) for l in d) - 2} changed lines; first {limit} diff lines)")
    print("\n".join(d[:limit]))


def tool(name):
    try:
        import triton
        p = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
        return p if os.path.exists(p) else shutil.which(name)
    except Exception:
        return shutil.which(name)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except Exception as exc:
        return f"<{cmd[0]}: {exc}>"


A = cubins(os.path.join(R, "A"))
print("A cubins:", sorted(os.path.relpath(p, R) for p in A.values()))
print("W cubins:", sorted(os.path.relpath(p, R) for p in cubins(os.path.join(R, "W")).values()))
for b in sorted(glob.glob(os.path.join(R, "B", "*"))):
    made = cubins(b)
    print(f"{os.path.basename(b)}: " + ", ".join(f"{os.path.basename(p)} {'IN A' if s in A else 'NOT IN A'}" for s, p in made.items()))
print()

keep = os.path.join(R, "kernel_files")
for b_cubin in sorted(glob.glob(os.path.join(R, "B", "*", "*", K + ".cubin"))):
    bdir = os.path.dirname(b_cubin)
    repro = os.path.basename(os.path.dirname(bdir))
    for a_cubin in sorted(glob.glob(os.path.join(R, "A", "*", K + ".cubin")) + sorted(glob.glob(os.path.join(R, "W", "*", K + ".cubin")))):
        adir = os.path.dirname(a_cubin)
        side = os.path.relpath(adir, R)
        print(f"======== {side} vs B/{repro}/{os.path.basename(bdir)} ({K})")
        for tag, d in (("A" if side.startswith("A") else "W", adir), ("B", bdir)):
            os.makedirs(os.path.join(keep, tag), exist_ok=True)
            for p in glob.glob(os.path.join(d, "*")):
                shutil.copy(p, os.path.join(keep, tag, os.path.basename(p)))
        for ext in ("source", "ttir", "ttgir", "llir", "ptx", "json"):
            if os.path.exists(os.path.join(adir, K + "." + ext)) or os.path.exists(os.path.join(bdir, K + "." + ext)):
                show_diff(os.path.join(adir, K + "." + ext), os.path.join(bdir, K + "." + ext), K + "." + ext)
        show_diff(os.path.join(adir, "__grp__" + K + ".json"), os.path.join(bdir, "__grp__" + K + ".json"), "__grp__" + K + ".json", 40)
        ab, bb = open(a_cubin, "rb").read(), open(b_cubin, "rb").read()
        diffs = [i for i in range(min(len(ab), len(bb))) if ab[i] != bb[i]]
        print(f"--- cubin: A {len(ab)} bytes, B {len(bb)} bytes, {'identical' if ab == bb else f'{len(diffs)} differing bytes in the common length, first at {diffs[:8]}'}")
        sa = [m.decode() for m in re.findall(rb"[\x20-\x7e]{6,}", ab)]
        sb = [m.decode() for m in re.findall(rb"[\x20-\x7e]{6,}", bb)]
        print("--- strings (-n 6) only in A:", [s for s in sa if s not in sb][:20])
        print("--- strings (-n 6) only in B:", [s for s in sb if s not in sa][:20])
        cu = tool("cuobjdump")
        if cu:
            ea, eb = run([cu, "-elf", a_cubin]), run([cu, "-elf", b_cubin])
            d = list(difflib.unified_diff(ea.splitlines(), eb.splitlines(), "A.elf", "B.elf", n=0, lineterm=""))
            print(f"--- cuobjdump -elf: {'identical' if not d else 'DIFFERS'}")
            print("\n".join(d[:60]))
            sa_, sb_ = run([cu, "-sass", a_cubin]), run([cu, "-sass", b_cubin])
            d = list(difflib.unified_diff(sa_.splitlines(), sb_.splitlines(), "A.sass", "B.sass", n=0, lineterm=""))
            print(f"--- cuobjdump -sass: {'identical' if not d else 'DIFFERS'}")
            print("\n".join(d[:40]))
        print()

# the reproducer of K: its _SOURCES file names, its _define lines, the head of its kernel
print("======== the reproducer of", K)
target = None
for r in sorted(glob.glob(os.path.join(R, "repros", "*.py"))):
    t = text(r)
    if re.search(r"_define\([^\n]*'" + re.escape(K) + "'", t) or f"'{K}'" in t:
        target = r
        break
if target:
    t = text(target)
    print("file:", os.path.basename(target), len(t), "chars")
    print("_SOURCES files:", re.findall(r"^    ('[^']+'): \[", t, re.M))
    print("pieces (first line):", re.findall(r"^        \((\d+), ", t, re.M))
    for line in t.splitlines():
        if line.startswith(("_define", "kernel = ", "_namespace(")):
            print("  ", line[:300])
    # each piece of source the reproducer puts in linecache, against the file on disk now
    import ast
    tree = ast.parse(t)
    sources = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_SOURCES")
    for file, pieces in sources.items():
        disk = text(file)
        for first, piece in pieces:
            lines = piece.splitlines(keepends=True)
            same = disk is not None and disk.splitlines(keepends=True)[first - 1 : first - 1 + len(lines)] == lines
            print(f"piece {file}:{first} ({len(lines)} lines): {'as on disk' if same else ('FILE MISSING' if disk is None else 'NOT AS ON DISK')}")
    # the files each PTX names (.file directives)
    pa = sorted(glob.glob(os.path.join(R, "A", "*", K + ".ptx")))
    pb = sorted(glob.glob(os.path.join(R, "B", os.path.basename(target)[:-3], "*", K + ".ptx")))
    if pa and pb:
        def files(ptx):  # .file N "path" or .file N "dir" "name"
            return [(m.group(1), os.path.join(*re.findall(r'"([^"]*)"', m.group(2)))) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+(.*)$', text(ptx), re.M)]
        fa, fb = files(pa[0]), files(pb[0])
        print("A .file:", fa)
        print("B .file:", fb)
        swap = {b: a for (_, a), (_, b) in zip(fa, fb) if a != b}
        if swap:
            fixed = t
            for b, a in swap.items():
                fixed = fixed.replace(repr(b), repr(a))
            path = os.path.join(R, "repro_fixed.py")
            with open(path, "w") as f:
                f.write(fixed)
            env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(R, "B_fixed"))
            p = subprocess.run([sys.executable, path], cwd=CWD, env=env, capture_output=True, text=True, timeout=60)
            made = cubins(os.path.join(R, "B_fixed"))
            print(f"reproducer with A's file names {swap}: rc {p.returncode}; cubins {[os.path.basename(v) + (' IN A' if s in A else ' NOT IN A') for s, v in made.items()]}")
            print(p.stderr[-2000:])
else:
    print("no reproducer names", K)
EOF

export -f main
export R F K ROOT
timeout 330 bash -c main
echo "main rc=$?" >> "$R/rc.txt"
# small enough to come back: the caches without their .so and cubins (the kernel's own in kernel_files/)
tar czf "${OUT:-/tmp}/repro8.tar.gz" --exclude='*.so' --exclude='*.cubin' -C /tmp/irscope-h200 repro8
tar czf "${OUT:-/tmp}/repro8_kernel_cubins.tar.gz" -C /tmp/irscope-h200 repro8/kernel_files 2>/dev/null
ls -la "${OUT:-/tmp}"
