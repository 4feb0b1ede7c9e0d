"""Every process of one command: `python bench/procacct.py CMD...` (issue 20).

Samples /proc every 5 ms and prints, to stderr, each descendant's last
utime+stime and command line (a process shorter than a sample is missed;
the rusage total of the children is printed beside the sampled sum).
"""
import os, subprocess, sys, time, resource
TCK = os.sysconf("SC_CLK_TCK")
def children_map():
    m = {}
    for d in os.listdir("/proc"):
        if not d.isdigit(): continue
        try:
            with open(f"/proc/{d}/stat") as f: s = f.read()
        except OSError: continue
        r = s.rsplit(")", 1)[1].split()
        ppid = int(r[1]); ut, st = int(r[11]), int(r[12])
        m[int(d)] = (ppid, ut + st)
    return m
p = subprocess.Popen(sys.argv[1:])
seen = {}  # pid -> [cpu ticks, cmd, ppid]
desc = {p.pid}
t0 = time.time()
while p.poll() is None:
    m = children_map()
    changed = True
    while changed:
        changed = False
        for pid, (ppid, _) in m.items():
            if pid not in desc and ppid in desc:
                desc.add(pid); changed = True
    for pid in list(desc):
        if pid in m:
            if pid not in seen:
                try: cmd = open(f"/proc/{pid}/cmdline","rb").read().replace(b"\0", b" ").decode()[:160]
                except OSError: cmd = "?"
                seen[pid] = [0, cmd, m[pid][0]]
            else:
                try:  # a forked child execs later: keep its last command line
                    c = open(f"/proc/{pid}/cmdline","rb").read().replace(b"\0", b" ").decode()[:160]
                    if c: seen[pid][1] = c
                except OSError: pass
            seen[pid][0] = m[pid][1]
    time.sleep(0.005)
wall = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
tot = ru.ru_utime + ru.ru_stime
print(f"# rc={p.returncode} wall={wall:.2f}s children CPU (rusage)={tot:.2f}s sampled procs={len(seen)} load={os.getloadavg()}", file=sys.stderr)
for pid, (t, cmd, ppid) in sorted(seen.items()):
    if t >= 2:
        print(f"{t/TCK:7.2f} {pid:7d} {ppid:7d} {cmd}", file=sys.stderr)
print(f"# sum sampled = {sum(v[0] for v in seen.values())/TCK:.2f}s", file=sys.stderr)
