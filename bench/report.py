#!/usr/bin/env python3
"""Prints the benchmark table from the raw results bench/run.sh collects.

    bench/report.py RESULTS.tsv

RESULTS.tsv has one measurement a line: kind, fs, mode, rep, key, value
(tab-separated).  Every figure printed is a median over the interleaved
repetitions; ratios are against native in the same run (and on the same
filesystem for the workload).
"""
import statistics
import sys
from collections import defaultdict

MODE_ORDER = ["native", "observe", "seccomp", "ebpf", "ebpf-nokeep", "cb-hosts", "cb-default",
              "layer-notify", "layer-tracer", "layer-mounts", "layer-landlock", "floor", "floor-all", "floor-creates",
              "floor-connect", "tracer-floor", "strace", "bwrap", "bwrap-pid", "ebpf-bwrap", "firejail", "cb-start"]
MODE_LABEL = {
    "native": "native",
    "observe": "cottonbox --observe (default policy)",
    "seccomp": "cottonbox houdini, seccomp",
    "ebpf": "cottonbox houdini, seccomp+ebpf",
    "ebpf-nokeep": "cottonbox houdini, seccomp+ebpf, --no-keep",
    "floor": "bare notify floor, write-opens",
    "floor-all": "bare notify floor, every open",
    "floor-creates": "bare notify floor, creates+renames",
    "tracer-floor": "bare tracer floor, raw syscall tps",
    "cb-start": "cottonbox --help (no session)",
    "layer-notify": "cottonbox houdini, --layers notify",
    "layer-tracer": "cottonbox houdini, --layers tracer",
    "layer-mounts": "cottonbox houdini, --layers mounts",
    "layer-landlock": "cottonbox houdini, --layers landlock",
    "cb-hosts": "cottonbox, host rules, seccomp",
    "cb-default": "cottonbox, rules/default.yaml, seccomp",
    "floor-connect": "bare notify floor, + connect",
    "strace": "strace -f",
    "bwrap": "bwrap --dev-bind / /",
    "bwrap-pid": "bwrap, own pid namespace",
    "ebpf-bwrap": "cottonbox seccomp+ebpf, bwrap inside",
    "firejail": "firejail",
}
# Modes whose command runs below a pid namespace's init that nobody waits
# for with rusage (bwrap --unshare-pid): their CPU time cannot be measured.
NO_CPU = {"bwrap-pid", "ebpf-bwrap"}
PHASES = ["untar", "grep", "compile", "git", "copy", "edit", "find-delete", "rm"]
OPS = ["getppid", "read-open", "write-open", "unlink"]


def med(xs):
    return statistics.median(xs) if xs else None


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def fnum(x, fmt="{:.2f}", none="-"):
    return none if x is None else fmt.format(x)


def ordered(modes):
    return sorted(modes, key=lambda m: MODE_ORDER.index(m) if m in MODE_ORDER else 99)


def table(header, rows, right=None):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    right = right if right is not None else set(range(1, len(header)))
    def line(r):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    meta = defaultdict(list)
    notes, fails = [], []
    data = defaultdict(list)  # (kind, fs, mode, key) -> [values]
    tracer = {}
    with open(sys.argv[1]) as f:
        for raw in f:
            parts = raw.rstrip("\n").split("\t")
            if len(parts) != 6:
                continue
            kind, fs, mode, rep, key, value = parts
            if kind == "meta":
                if key == "tracer":
                    tracer[mode] = value
                else:
                    meta[key].append(value)
            elif kind == "note":
                notes.append(value if fs == "-" else f"{fs} {mode} rep {rep}: {value}")
            elif kind == "fail":
                fails.append(f"{key} {fs} {mode} rep {rep}: {value}")
            else:
                try:
                    data[(kind, fs, mode, key)].append(float(value))
                except ValueError:
                    pass

    def m1(key):
        return meta[key][0] if meta.get(key) else "?"

    print()
    print("== Machine")
    print(f"CPU:      {m1('cpu')}, {m1('cores')} cores online")
    print(f"Kernel:   {m1('kernel')}     Memory: {m1('memory')}")
    print(f"Load avg: {m1('load_start')} at start, {m1('load_end')} at end   ({m1('date')})")
    print(f"CPU use:  {m1('busy_start')} in the second before the run (others' work); "
          f"{m1('busy_run')} during the run (all users)")
    for w in meta.get("workdir", []):
        print(f"Work dir: {w}")
    print(f"Binary:   {m1('cottonbox')}")
    print(f"Modes:    {m1('modes')}; tracer recorded by cottonbox: "
          + (", ".join(f"{k}={v}" for k, v in tracer.items()) or "-"))
    print(f"Cleanup:  {m1('cleanup')}")
    for n in dict.fromkeys(notes):
        print(f"Note:     {n}")
    for fl in fails:
        print(f"FAILED:   {fl}")

    # ---- workload
    fss = sorted({k[1] for k in data if k[0] == "wl"})
    wl_modes = ordered({k[2] for k in data if k[0] == "wl"})
    nrep = max((len(v) for k, v in data.items() if k[0] == "wl" and k[3] == "wall_s"), default=0)
    targets = []
    if fss:
        print()
        print(f"== Workload (median of {nrep} runs per mode, interleaved; {m1('workload').strip()})")
        rows = []
        for fs in fss:
            base = med(data[("wl", fs, "native", "wall_s")])
            cbase = med(data[("wl", fs, "native", "cpu_s")])
            for m in wl_modes:
                w = data[("wl", fs, m, "wall_s")]
                if not w:
                    continue
                if m in NO_CPU:
                    data[("wl", fs, m, "cpu_s")] = []
                mw = med(w)
                ev = med(data[("wl", fs, m, "events")])
                scpu = med(data[("wl", fs, m, "sup_cpu_s")])
                hwm = data[("wl", fs, m, "hwm_kb")]
                per_ev = (scpu * 1e6 / ev) if (scpu is not None and ev) else None
                rows.append([
                    fs, MODE_LABEL.get(m, m), fnum(mw), fnum(mw / base if base else None, "{:.2f}x"),
                    f"{min(w):.2f}..{max(w):.2f}", fnum(med(data[("wl", fs, m, "cpu_s")])),
                    fnum(med(data[("wl", fs, m, "cpu_s")]) / cbase
                         if cbase and data[("wl", fs, m, "cpu_s")] else None, "{:.2f}x"),
                    fnum(ev, "{:.0f}"), fnum(max(data[("wl", fs, m, "lost")], default=None), "{:.0f}"),
                    fnum(max(hwm) / 1024 if hwm else None, "{:.1f}"), fnum(scpu),
                    fnum(per_ev, "{:.1f}"),
                ])
                if base:
                    c = med(data[("wl", fs, m, "cpu_s")])
                    targets.append((fs, m, mw / base, c / cbase if c is not None and cbase else None))
        print(table(["fs", "mode", "median s", "ratio", "min..max s", "CPU s", "CPU ratio", "events", "lost",
                     "sup RSS MB", "sup CPU s", "sup µs/event"], rows, right=set(range(2, 12))))
        print("ratio: median wall time / native's.  CPU s: user+system time of everything the mode ran,"
              " supervisor included (wait4), and its ratio to native's: less sensitive to other users' load."
              "  events/lost: what the session's database holds.  sup RSS: peak VmHWM of the cottonbox process;"
              " sup CPU: its own CPU time, and per recorded event.")

        # Keeping for undo: what it costs against the same session without it.
        keep_rows = []
        for fs in fss:
            on, off = data[("wl", fs, "ebpf", "wall_s")], data[("wl", fs, "ebpf-nokeep", "wall_s")]
            if not on or not off:
                continue
            con, coff = med(data[("wl", fs, "ebpf", "cpu_s")]), med(data[("wl", fs, "ebpf-nokeep", "cpu_s")])
            kept = data[("wl", fs, "ebpf", "keep_mb")]
            keep_rows.append([fs, fnum(med(on)), fnum(med(off)), fnum(med(on) / med(off), "{:.2f}x"),
                              fnum(con / coff if con is not None and coff else None, "{:.2f}x"),
                              fnum(med(kept), "{:.0f}") if kept else "-"])
        if keep_rows:
            print()
            print("== Keeping for undo (seccomp+ebpf with keeping, the default, against --no-keep)")
            print(table(["fs", "keep s", "no-keep s", "ratio", "CPU ratio", "store MB"], keep_rows,
                        right=set(range(1, 6))))
            print("target: keeping costs at most 1.10x.  store MB: the keep store after one workload run.")

        # A sandbox inside a session: what the session adds to it.
        nest_rows = []
        for fs in fss:
            alone, inside = data[("wl", fs, "bwrap-pid", "wall_s")], data[("wl", fs, "ebpf-bwrap", "wall_s")]
            if not alone or not inside:
                continue
            own = next((r for f, m, r, c in targets if f == fs and m == "ebpf"), None)
            nest_rows.append([fs, fnum(med(alone)), fnum(med(inside)), fnum(med(inside) / med(alone), "{:.2f}x"),
                              fnum(own, "{:.2f}x")])
        if nest_rows:
            print()
            print("== A sandbox inside a session (bwrap with its own pid namespace, under cottonbox seccomp+ebpf)")
            print(table(["fs", "bwrap alone s", "under cottonbox s", "ratio", "cottonbox alone ratio"],
                        nest_rows, right=set(range(1, 5))))
            print("ratio: the workload inside bwrap under cottonbox against the same inside bwrap alone (wall time:"
                  " the CPU time of what runs below bwrap's pid 1 is not reported to anyone who waits); beside it,"
                  " cottonbox's own ratio against native: a sandbox inside a session should cost no more than that.")

        print()
        print("== Where the time goes: workload phases, median seconds (ratio to native)")
        rows = []
        for fs in fss:
            for m in wl_modes:
                if not data[("phase", fs, m, PHASES[0])]:
                    continue
                row = [fs, MODE_LABEL.get(m, m)]
                for p in PHASES:
                    v, b = med(data[("phase", fs, m, p)]), med(data[("phase", fs, "native", p)])
                    row.append("-" if v is None else (f"{v:.2f}" if m == "native" or not b else f"{v:.2f} ({v / b:.1f}x)"))
                rows.append(row)
        print(table(["fs", "mode"] + PHASES, rows, right=set(range(2, 2 + len(PHASES)))))

    # ---- micro
    mmodes = ordered({k[2] for k in data if k[0] == "micro"})
    micro_added = {}
    if mmodes:
        nm = max((len(data[("micro", "-", m, "getppid")]) for m in mmodes), default=0)
        print()
        print(f"== Single syscalls (bench_syscalls in the first work dir): cost per call, median of {nm} runs "
              "(each the median of its batches); (+ added vs native)")
        rows = []
        for m in mmodes:
            row = [MODE_LABEL.get(m, m)]
            for op in OPS:
                v, b = med(data[("micro", "-", m, op)]), med(data[("micro", "-", "native", op)])
                if v is None:
                    row.append("-")
                    continue
                s = f"{v / 1000:.2f} µs" if v >= 1000 else f"{v:.0f} ns"
                if m != "native" and b is not None:
                    d = v - b
                    s += f" ({'+' if d >= 0 else '-'}{abs(d) / 1000:.2f} µs)" if abs(d) >= 1000 else f" ({d:+.0f} ns)"
                    micro_added[(m, op)] = d
                row.append(s)
            ev = med(data[("micro", "-", m, "events")])
            scpu = med(data[("micro", "-", m, "sup_cpu_s")])
            row.append(fnum(ev, "{:.0f}"))
            row.append(fnum(scpu * 1e6 / ev if scpu is not None and ev else None, "{:.1f}"))
            hwm = data[("micro", "-", m, "hwm_kb")]
            row.append(fnum(max(hwm) / 1024 if hwm else None, "{:.1f}"))
            rows.append(row)
        print(table(["mode"] + OPS + ["events", "sup µs/event", "sup RSS MB"], rows))
        print("read-open and write-open include the close(); write-open is O_WRONLY|O_CREAT on an existing file;"
              " sup µs/event: the supervisor's CPU time per recorded event.")

    # ---- launch
    lmodes = ordered({k[2] for k in data if k[0] == "launch"})
    launch = {}
    if lmodes:
        nl = max(len(data[("launch", "-", m, "wall_ms")]) for m in lmodes)
        base = med(data[("launch", "-", "native", "wall_ms")])
        print()
        print(f"== Launch: X -- /bin/true, ms (median of {nl} per mode, interleaved rounds)")
        rows = []
        for m in lmodes:
            v = data[("launch", "-", m, "wall_ms")]
            launch[m] = med(v)
            rows.append([MODE_LABEL.get(m, m), fnum(med(v)), fnum(med(v) / base if base else None, "{:.1f}x"),
                         fnum(pct(v, 0.1)), fnum(pct(v, 0.9)), len(v)])
        print(table(["mode", "median ms", "ratio", "p10", "p90", "n"], rows))

    # ---- ingest
    rates = data[("ingest", "-", "store", "events_per_s")]
    lost = data[("ingest", "-", "store", "lost")]
    if rates:
        ne = med(data[("ingest", "-", "store", "events")])
        print()
        print(f"== Ingest (bench_store: {ne:.0f} events per run, 2 producer threads, read back)")
        print(f"events/s committed: median {med(rates):,.0f}  (min {min(rates):,.0f}, max {max(rates):,.0f}, "
              f"{len(rates)} runs); lost: {max(lost):.0f}")
        wu = data[("ingest", "-", "store", "writer_us")]
        if wu:
            print(f"writer thread CPU: median {med(wu):.2f} µs/event ({1e6 / med(wu):,.0f} events/s if it had a core "
                  "to itself)")

    # ---- connect
    cvariants = [v for v in ("blocking", "nonblocking", "unix") if any(k[0] == "connect" and k[1] == v for k in data)]
    connect_added = {}
    if cvariants:
        cmodes = ordered({k[2] for k in data if k[0] == "connect"})
        nc = max(len(data[("connect", v, m, "ns")]) for v in cvariants for m in cmodes)
        print()
        print(f"== Connects (bench_connect: {m1('connect_requests')} HTTP requests on loopback, a new TCP connection "
              f"each; median of {nc} runs, each the median of 5 batches)")
        rows = []
        nreq = float(m1("connect_requests")) if m1("connect_requests") != "?" else None
        for v in cvariants:
            base = med(data[("connect", v, "native", "ns")])
            cbase = med(data[("connect", v, "native", "cpu_s")])
            for m in cmodes:
                t = med(data[("connect", v, m, "ns")])
                if t is None:
                    continue
                d = t - base if base is not None and m != "native" else None
                if d is not None:
                    connect_added[(v, m)] = d
                ev = med(data[("connect", v, m, "events")])
                scpu = med(data[("connect", v, m, "sup_cpu_s")])
                hwm = data[("connect", v, m, "hwm_kb")]
                cpu = med(data[("connect", v, m, "cpu_s")])
                dcpu = (cpu - cbase) * 1e6 / nreq if cpu is not None and cbase is not None and nreq and m != "native" else None
                rows.append([v, MODE_LABEL.get(m, m), f"{t / 1000:.1f}", fnum(t / base if base else None, "{:.2f}x"),
                             fnum(d / 1000 if d is not None else None, "{:+.1f}"),
                             fnum(cpu), fnum(dcpu, "{:+.1f}"), fnum(ev, "{:.0f}"),
                             fnum(scpu * 1e6 / ev if scpu is not None and ev else None, "{:.1f}"),
                             fnum(max(hwm) / 1024 if hwm else None, "{:.1f}")])
        print(table(["connect", "mode", "µs/request", "ratio", "added µs/connect", "CPU s", "added CPU µs/connect",
                     "events", "sup µs/event", "sup RSS MB"], rows, right=set(range(2, 10))))
        print("each request is one connect(2), decided by the supervisor under cottonbox (host rules) and notified"
              " under the floor: the added time per request is the cost per decided connect, and the added CPU time"
              " (user+system of everything the mode ran, per request) the same cost less sensitive to other users'"
              " load.  blocking: a blocking"
              " socket (cottonbox carries the connect out on a worker thread); nonblocking: O_NONBLOCK and poll, as"
              " event loops connect; unix: blocking, to a server on a unix socket outside the session, where the default"
              " policy's deputy rules ask who serves it (net.server).  events: what the session recorded (one net.connect per request); sup µs/event:"
              " the supervisor's own CPU time per event.")

    # ---- idle sessions (issue 21)
    imodes = sorted({k[2] for k in data if k[0] == "idle"},
                    key=lambda m: (m.rsplit("-", 1)[0], int(m.rsplit("-", 1)[1])))
    if imodes:
        print()
        print("== A getppid outside every session, beside idle live sessions (bench/tracer_idle.sh; median of runs)")
        rows = []
        for m in imodes:
            backend, n = m.rsplit("-", 1)
            t = med(data[("idle", "-", m, "getppid_ns")])
            base = med(data[("idle", "-", backend + "-0", "getppid_ns")])
            per = (t - base) / int(n) if t is not None and base is not None and int(n) > 0 else None
            rows.append([backend, n, fnum(t, "{:.0f}"), fnum(t - base if t is not None and base is not None else None,
                                                              "{:+.0f}"), fnum(per, "{:+.1f}")])
        print(table(["tracer", "sessions", "ns/getppid", "added ns", "added ns per session"], rows,
                    right={1, 2, 3, 4}))
        print("service: every session recorded by the one resident tracer (`cottonbox tracer serve`); private:"
              " each session loads and attaches its own (COTTONBOX_FAKE_MISSING=tracer-service), the programs of"
              " every one of them run on every syscall of the host.")

    # ---- targets
    print()
    print("== Targets (issue 5)")
    def verdict(ok):
        return "met" if ok else "MISSED"
    # On a machine other people keep busy, wall-clock ratios measure them:
    # judge the workload on the CPU ratio then, and say so.
    try:
        busy = float(m1("busy_start").split("%")[0])
    except ValueError:
        busy = 0.0
    quiet = busy < 50
    if not quiet:
        print(f"(the CPUs were {busy:.0f}% busy with other work before the run: workload targets are judged on "
              "the CPU ratio, wall-clock ratios are shown but not trusted)")
    ratio = {(fs, m): (r, c) for fs, m, r, c in targets}
    for fs, m, r, c in targets:
        if m not in ("seccomp", "ebpf", "observe"):
            continue
        limit = 1.05 if m == "observe" else 1.15
        judged = r if quiet or c is None else c
        what = "wall" if quiet or c is None else "CPU"
        cpu = f", CPU {c:.2f}x" if c is not None else ""
        fl = ratio.get((fs, "floor"))
        vs = f"; bare notify floor: wall {fl[0]:.2f}x, CPU {fl[1]:.2f}x" if fl and fl[1] is not None else ""
        tf = ratio.get((fs, "tracer-floor"))
        if tf and tf[1] is not None and m in ("observe", "ebpf"):
            vs += f"; bare tracer floor: wall {tf[0]:.2f}x, CPU {tf[1]:.2f}x"
        name = "--observe" if m == "observe" else f"enforcing Houdini ({m})"
        print(f"workload, {name} on {fs}: wall {r:.2f}x{cpu}  (target <= {limit:.2f}x: "
              f"{verdict(judged <= limit)} on {what}{vs})")
    if "seccomp" in launch and "bwrap" in launch:
        print(f"launch, seccomp-only: {launch['seccomp']:.1f} ms vs bwrap {launch['bwrap']:.1f} ms "
              f"(target: within bwrap's time: {verdict(launch['seccomp'] <= launch['bwrap'])})")
    if "ebpf" in launch:
        print(f"launch, with eBPF: {launch['ebpf']:.1f} ms (target <= 25 ms: {verdict(launch['ebpf'] <= 25)})")
    else:
        print("launch, with eBPF: not measured (mode skipped)")
    for m in ("seccomp", "ebpf", "observe", "floor", "floor-creates", "tracer-floor"):
        for op in ("write-open", "unlink"):
            if (m, op) in micro_added:
                d = micro_added[(m, op)] / 1000
                print(f"{op} under {m}: {d:+.2f} µs per call (target <= 5 µs per notified call: {verdict(d <= 5)})")
        for op in ("read-open", "getppid"):
            if (m, op) in micro_added:
                d = micro_added[(m, op)]
                nat = data[("micro", "-", "native", op)]
                spread = f"; native runs spread {min(nat):.0f}..{max(nat):.0f} ns" if len(nat) > 1 else ""
                print(f"{op} under {m}: {d:+.0f} ns per call (target: nothing measurable{spread})")
    for (v, m), d in connect_added.items():
        print(f"{v} connect under {m}: {d / 1000:+.1f} µs per {'decided' if m.startswith('cb-') else 'notified'} connect")
    if rates:
        r = med(rates)
        wu = data[("ingest", "-", "store", "writer_us")]
        extra = ""
        if wu:
            cap = 1e6 / med(wu)
            extra = f"; writer CPU {med(wu):.2f} µs/event = {cap:,.0f}/s on a core of its own"
            if not quiet:
                r = cap
                extra += ", judged on that"
        print(f"ingest: {med(rates):,.0f} events/s, {max(lost):.0f} lost (target >= 300,000/s with zero loss: "
              f"{verdict(r >= 300000 and max(lost) == 0)}{extra})")
    hw = [v for k, vs in data.items() if k[0] == "wl" and k[3] == "hwm_kb" for v in vs]
    if hw:
        print(f"supervisor peak RSS during the workload: {max(hw) / 1024:.1f} MB (target < 30 MB: "
              f"{verdict(max(hw) < 30 * 1024)})")
    hm = [v for k, vs in data.items() if k[0] == "micro" and k[3] == "hwm_kb" for v in vs]
    if hm:
        ev = max((v for k, vs in data.items() if k[0] == "micro" and k[3] == "events" for v in vs), default=0)
        print(f"supervisor peak RSS during bench_syscalls ({ev:.0f} events): {max(hm) / 1024:.1f} MB "
              f"(target < 30 MB: {verdict(max(hm) < 30 * 1024)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
