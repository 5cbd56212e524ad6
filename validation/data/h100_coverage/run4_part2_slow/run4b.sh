#!/bin/sh
# Second machine of run4: DETACHED files (setsid, long limit, collected by the next call on the warm machine)
# and FG files in the foreground; the same command each call.
set -u
R=/root/run4b
W=/root/repo4
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
mkdir -p $R/slow $R/more
[ -s $R/versions.txt ] || { python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])"; nproc; } > $R/versions.txt
if [ ! -f $R/slow/started ]; then
  date -u > $R/slow/started
  setsid nohup sh -c "python3 benchmarks/coverage.py --gpu-only --files $DETACHED --jobs 2 --timeout ${SLOW_TIMEOUT:-1050} --target sm_90 --out $R/slow > $R/slow/coverage.log 2>&1; echo rc=\$? > $R/slow/rc.txt" < /dev/null > /dev/null 2>&1 &
fi
if [ -n "${FG:-}" ] && [ ! -f $R/more/rc.txt ]; then
  timeout $((BUDGET - 20)) python3 benchmarks/coverage.py --gpu-only --files $FG --jobs 3 --timeout ${TIMEOUT:-480} --target sm_90 --out $R/more > $R/more/coverage.log 2>&1
  echo "more rc=$?" | tee $R/more/rc.txt
fi
while [ ! -f $R/slow/rc.txt ] && [ $(( $(date +%s) - START )) -lt $BUDGET ]; do sleep 5; done
echo "slow: $(cat $R/slow/rc.txt 2>/dev/null || echo still running) $(date -u) started $(cat $R/slow/started)"
cut -c1-200 $R/slow/coverage.log; cut -c1-200 $R/more/coverage.log
ps aux | grep -c "coverage.py --child"
tar czf $OUT/run4b.tgz -C /root run4b
