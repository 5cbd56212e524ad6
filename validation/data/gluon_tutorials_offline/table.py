"""The table of README.md from the .time/.err files beside it (and the report JSONs, not kept: their counts are in the table)."""
import json, glob, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
rows = []
for rc_line in open(os.path.join(HERE, "rc.txt")):
    if "rc=" not in rc_line: continue
    name, rc = rc_line.split()
    rc = rc.split("=")[1]
    t = open(os.path.join(HERE, f"{name}.time")).read().split()
    secs, kb = t[-4], t[-2]
    err = open(os.path.join(HERE, f"{name}.err")).read().strip().splitlines()
    errors = [l for l in err if l.startswith("irscope: error")]
    try:
        d = json.load(open(os.path.join(HERE, f"{name}.json")))
        n = len(d["kernels"]); failed = sum(1 for k in d["kernels"] if k.get("error"))
        named = len(d.get("named") or []); missing = len(d.get("missing") or [])
        notes = d.get("notes") or []
    except Exception:
        n = failed = named = missing = "-"; notes = []
    release, file = name.split("_", 1)
    outcome = errors[0][len("irscope: error: "):][:160] if errors and n in ("-", 0) else ("ok" if rc == "0" else f"exit {rc}")
    rows.append((("3.6" if release == "36" else "main 2026-08-20"), file, rc, n, failed, named, missing, secs, int(kb) // 1024, outcome))
print("| release | tutorial | exit | compilations | failed to compile | named | missing | seconds | peak MB | outcome |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(map(str, r)) + " |")
