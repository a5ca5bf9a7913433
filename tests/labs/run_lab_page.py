#!/usr/bin/env python3
"""Runs the commands a lab page shows and checks their output (ctest -L labs).

    run_lab_page.py PAGE [--path DIR]... [--actual]
    run_lab_page.py --self-test

The convention (docs/labs/README.md, "How the pages are tested"):

  * Only fenced blocks whose info string is `console` are run.  In them a
    line starting with "$ " is a command, a following line starting with
    "> " continues it (a heredoc, a long loop), and the lines up to the next
    command or the end of the block are its output: stdout and stderr
    together, in the order they were written.
  * In an output line, "..." stands for any text (pids, times, paths); a line
    that is only "..." stands for any number of lines, none included.
    Trailing blank lines are ignored on both sides.
  * All the page's blocks run in one bash, in order, in a fresh scratch
    directory (mode 0755, so that a plain user can enter it), with the lab
    programs on PATH, LC_ALL=C and stdin from /dev/null: state (cd,
    variables, files) carries from one command to the next, as in a reader's
    terminal.
  * `<!-- lab: needs WHAT[, WHAT...] -->` on the line before a block skips that
    block unless the host has it, each probed here, natively:
        root         the effective uid is 0
        userns       a plain user may make a user namespace (probed as nobody)
        landlock N   Landlock ABI N or later
        bpf          root, and the kernel loads a BPF program
        cmd NAME     NAME is on PATH (a program this build may not have)

Exit status: 0 when every block ran and matched; 1 when any did not match
(each mismatch shown with the command, the page's output and the real one);
77 when none failed but some were skipped (the reasons are printed).  With
--actual, prints every command's real output in the page's format instead
(for writing a page; no check).
"""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 900  # seconds for a whole page


class Block:
    def __init__(self, line, needs):
        self.line = line  # 1-based line of the opening fence
        self.needs = needs  # list of requirement strings
        self.commands = []  # [(command text, [expected lines], line)]


def parse(text):
    blocks, needs, block, lines = [], [], None, text.split("\n")
    for n, line in enumerate(lines, 1):
        if block is None:
            m = re.match(r"\s*<!--\s*lab:\s*needs\s+(.*?)\s*-->\s*$", line)
            if m:
                needs = [w.strip() for w in m.group(1).split(",") if w.strip()]
                continue
            if re.match(r"^```console\s*$", line):
                block = Block(n, needs)
            if line.strip():
                needs = []
            continue
        if re.match(r"^```\s*$", line):
            blocks.append(block)
            block = None
        elif line.startswith("$ "):
            block.commands.append([line[2:], [], n])
        elif line.startswith("> ") and block.commands and not block.commands[-1][1]:
            block.commands[-1][0] += "\n" + line[2:]
        elif block.commands:
            block.commands[-1][1].append(line)
        elif line.strip():
            raise SystemExit(f"line {n}: output before any command in a console block")
    if block is not None:
        raise SystemExit(f"line {block.line}: console block never closed")
    return blocks


def line_matches(pattern, line):
    if "..." not in pattern:
        return pattern == line
    regex = ".*".join(re.escape(p) for p in pattern.split("..."))
    return re.fullmatch(regex, line, re.S) is not None


def output_matches(expected, actual):
    """expected: lines with wildcards; actual: lines.  A line "..." matches any run of lines."""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = j == len(actual)
        elif expected[i] == "...":
            r = any(m(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and line_matches(expected[i], actual[j]) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return m(0, 0)


def trim(lines):
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


# --- probes of the host, asked natively -------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def probe_userns():
    pid = os.fork()
    if pid == 0:
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
            os._exit(0 if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 else 1)
        except BaseException:
            os._exit(2)
    _, st = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(st) == 0:
        return None
    return "a plain user's unshare(CLONE_NEWUSER|CLONE_NEWNS) is refused on this host"


def probe_landlock(want):
    abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
    if abi < 0:
        return f"Landlock is not enabled: {os.strerror(ctypes.get_errno())}"
    return None if abi >= want else f"Landlock ABI {abi}, the block needs {want}"


def probe_bpf():
    if os.geteuid() != 0:
        return "not root: loading and attaching BPF tracing programs needs CAP_BPF and CAP_PERFMON"
    insns = bytes([0xB7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0])  # r0 = 0; exit
    prog = ctypes.create_string_buffer(insns)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 2), 8)  # SOCKET_FILTER, 2 instructions
    ctypes.memmove(ctypes.byref(attr, 8), (ctypes.c_uint64 * 2)(ctypes.addressof(prog), ctypes.addressof(lic)), 16)
    fd = libc.syscall(321, 5, attr, 128)  # bpf(BPF_PROG_LOAD)
    if fd < 0:
        return f"loading a BPF program failed: {os.strerror(ctypes.get_errno())}"
    os.close(fd)
    return None


def probe(need, env):
    words = need.split()
    if words == ["root"]:
        return None if os.geteuid() == 0 else "not root"
    if words == ["userns"]:
        return probe_userns()
    if len(words) == 2 and words[0] == "landlock":
        return probe_landlock(int(words[1]))
    if words == ["bpf"]:
        return probe_bpf()
    if len(words) == 2 and words[0] == "cmd":
        return None if shutil.which(words[1], path=env["PATH"]) else f"{words[1]} is not built here"
    raise SystemExit(f"unknown requirement {need!r}")


# --- running -------------------------------------------------------------------


def run_page(path, dirs, actual_only):
    text = open(path, encoding="utf-8").read()
    blocks = parse(text)
    if not blocks:
        print(f"{path}: no console block: nothing would be checked")
        return 1
    env = dict(os.environ)
    env["PATH"] = ":".join([os.path.abspath(d) for d in dirs] + [env.get("PATH", "/usr/bin:/bin")])
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)
    skipped, runs = [], []
    for b in blocks:
        why = [r for r in (probe(n, env) for n in b.needs) if r]
        if why:
            skipped.append((b, "; ".join(why)))
        else:
            runs.extend(b.commands)
    scratch = tempfile.mkdtemp(prefix="cottonbox-lab.")
    os.chmod(scratch, 0o755)
    outdir = tempfile.mkdtemp(prefix="cottonbox-lab-out.")
    try:
        script = [f"cd {scratch} || exit 125"]
        for i, (cmd, _, _) in enumerate(runs):
            script.append(f"{{\n{cmd}\n}} > {outdir}/{i} 2>&1 < /dev/null")
        subprocess.run(["bash", "--noprofile", "--norc"], input="\n".join(script) + "\n", text=True,
                       env=env, cwd=scratch, timeout=TIMEOUT)
        failed = 0
        for i, (cmd, expected, line) in enumerate(runs):
            try:
                with open(f"{outdir}/{i}", encoding="utf-8", errors="replace") as f:
                    got = trim(f.read().split("\n"))
            except FileNotFoundError:
                got = ["(never ran: the shell stopped before this command)"]
            if actual_only:
                print("$ " + cmd.replace("\n", "\n> "))
                print("\n".join(got))
                continue
            if output_matches(trim(expected), got):
                continue
            failed += 1
            print(f"{path}:{line}: the output differs from the page's")
            print("  $ " + cmd.replace("\n", "\n  > "))
            print("  the page says:")
            print("\n".join("    | " + l for l in trim(expected)) or "    (nothing)")
            print("  it printed:")
            print("\n".join("    | " + l for l in got) or "    (nothing)")
    finally:
        subprocess.run(["rm", "-rf", scratch, outdir])
    for b, why in skipped:
        print(f"{path}:{b.line}: block skipped: {why}")
    if actual_only:
        return 0
    print(f"{path}: {len(runs) - failed} of {len(runs)} commands matched, {len(skipped)} blocks skipped")
    if failed:
        return 1
    return 77 if skipped else 0


# --- the runner checks itself: a check that cannot fail checks nothing --------


def self_test():
    bad = []

    def expect(cond, what):
        if not cond:
            bad.append(what)

    expect(line_matches("pid ... ran", "pid 42 ran"), "... in a line")
    expect(not line_matches("pid ... ran", "pid 42 stopped"), "... must not match a different tail")
    expect(not line_matches("exact", "exact "), "a line matches exactly")
    expect(output_matches(["a", "...", "z"], ["a", "b", "c", "z"]), "a ... line spans lines")
    expect(output_matches(["a", "...", "z"], ["a", "z"]), "a ... line may span none")
    expect(not output_matches(["a", "z"], ["a", "b", "z"]), "an extra line is a mismatch")
    expect(not output_matches(["a"], []), "missing output is a mismatch")
    page = "\n".join([
        "<!-- lab: needs root -->", "```console", "$ echo one; echo two >&2", "one", "two", "```", "",
        "```console", "$ cat <<EOF", "> x", "> EOF", "x", "$ echo $((6*7))", "42", "```", "",
        "```sh", "$ not run", "```"])
    blocks = parse(page)
    expect(len(blocks) == 2, "two console blocks, the sh block ignored")
    expect(blocks[0].needs == ["root"] and blocks[1].needs == [], "needs apply to the next block only")
    expect(blocks[1].commands[0][0] == "cat <<EOF\nx\nEOF", "> continues a command")
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.md")
        with open(good, "w") as f:
            f.write(page.replace("<!-- lab: needs root -->", ""))
        wrong = os.path.join(d, "wrong.md")
        with open(wrong, "w") as f:
            f.write(page.replace("42", "43"))
        state = os.path.join(d, "state.md")
        with open(state, "w") as f:
            f.write("```console\n$ x=5; cd /\n$ echo $x $PWD\n5 /\n```\n")
        devnull = open(os.devnull, "w")
        old, sys.stdout = sys.stdout, devnull
        try:
            expect(run_page(good, [], False) == 0, "a page that says the truth passes")
            expect(run_page(wrong, [], False) == 1, "a page whose output is wrong fails")
            expect(run_page(state, [], False) == 0, "state carries from one command to the next")
        finally:
            sys.stdout = old
    for b in bad:
        print("run_lab_page self-test failed:", b)
    print(f"run_lab_page self-test: {'ok' if not bad else 'FAILED'}")
    return 1 if bad else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    page, dirs, actual = None, [], False
    it = iter(argv)
    for a in it:
        if a == "--path":
            dirs.append(next(it))
        elif a == "--actual":
            actual = True
        elif page is None:
            page = a
        else:
            raise SystemExit(__doc__)
    if page is None:
        raise SystemExit(__doc__)
    return run_page(page, dirs, actual)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
