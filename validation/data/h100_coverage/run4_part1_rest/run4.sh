#!/bin/sh
# One device call of the run4 coverage measurement (issue 29): the same command each call, it picks up where
# the last left off on a warm machine. Slow tutorials (03, 06, 09) run detached (setsid) with a long limit;
# the rest run in the foreground, those not done yet; results tarred into $OUT.
set -u
R=/root/run4
W=/root/repo4                     # a private copy: the next call's sync must not change files under a run
START=$(date +%s)
BUDGET=${BUDGET:-540}
if [ ! -d /tmp/site ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
if [ ! -d $W ]; then
  mkdir -p $W && tar cf - --exclude=./.whl --exclude=./.git . | tar xf - -C $W && cp .cov/coverage.py $W/benchmarks/coverage.py
fi
export PYTHONPATH=$W:/tmp/site PYTHONUNBUFFERED=1
cd $W
mkdir -p $R/slow $R/rest
[ -s $R/versions.txt ] || python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])" > $R/versions.txt
nproc >> $R/versions.txt
SLOW="tutorials/triton-3.6/06-fused-attention.py tutorials/triton-3.6/09-persistent-matmul.py tutorials/triton-3.6/03-matrix-multiplication.py"
if [ ! -f $R/slow/started ]; then
  date -u > $R/slow/started
  setsid nohup sh -c "python3 benchmarks/coverage.py --gpu-only --files $SLOW --jobs 3 --timeout ${SLOW_TIMEOUT:-1500} --target sm_90 --out $R/slow > $R/slow/coverage.log 2>&1; echo rc=\$? > $R/slow/rc.txt" < /dev/null > /dev/null 2>&1 &
fi
REST=$(python3 - <<'PY'
import json, os, sys
sys.path.insert(0, "benchmarks")
import corpus
slow = {"tutorials/triton-3.6/06-fused-attention.py", "tutorials/triton-3.6/09-persistent-matmul.py",
        "tutorials/triton-3.6/03-matrix-multiplication.py"}
first = ["tutorials/triton-3.6/02-fused-softmax.py", "tutorials/triton-3.6/05-layer-norm.py"]
files = [f for f in corpus.corpus_files() if f not in slow
         and (not f.startswith("tutorials/") or f.startswith("tutorials/triton-3.6/"))]
done = set()
if os.path.exists("/root/run4/rest/coverage.json"):
    done = {r["file"] for r in json.load(open("/root/run4/rest/coverage.json"))["files"]}
todo = [f for f in first if f in files] + [f for f in files if f not in first and not f.startswith("snippets/")] \
    + [f for f in files if f.startswith("snippets/")]
print(" ".join(f for f in todo if f not in done))
PY
)
echo "rest to do: $(echo $REST | wc -w)"
if [ -n "$REST" ]; then
  LEFT=$((BUDGET - ($(date +%s) - START)))
  timeout $LEFT python3 benchmarks/coverage.py --gpu-only --append --files $REST --jobs ${JOBS:-6} --timeout ${TIMEOUT:-400} --target sm_90 --out $R/rest >> $R/rest/coverage.log 2>&1
  echo "rest rc=$?" | tee -a $R/rest/rc.txt
fi
while [ ! -f $R/slow/rc.txt ] && [ $(( $(date +%s) - START )) -lt $BUDGET ]; do sleep 5; done
echo "slow: $(cat $R/slow/rc.txt 2>/dev/null || echo still running)"; ls -la $R/slow
grep -c . $R/slow/coverage.log; tail -c 1500 $R/slow/coverage.log
tail -12 $R/rest/coverage.md 2>/dev/null | cut -c1-300
tar czf $OUT/run4.tgz -C /root run4
ls -la $OUT
