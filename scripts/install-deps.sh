#!/usr/bin/env bash
# The single list of what cottonbox needs from Debian: README, CI and developers all run this.
# Idempotent: installs only what is missing, so a second run costs one dpkg query.
set -euo pipefail

PACKAGES=(
    # build
    cmake ninja-build g++ pkg-config clang llvm
    # supervisor, tracer
    libseccomp-dev libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
    # policy, store, CLI
    libyaml-cpp-dev libsqlite3-dev nlohmann-json3-dev libcli11-dev
    # GUI
    qt6-base-dev qt6-base-dev-tools libgl-dev xvfb xauth
    # tests, the format and tidy checks (clang, llvm above also build the sanitizer and fuzz targets)
    clang-format clang-tidy
    libgtest-dev libgmock-dev python3 git make gcc libc6-dev tar gzip zip unzip rsync
    perl findutils coreutils util-linux e2fsprogs procps sqlite3 iproute2 psmisc
    # the network tests: dig, and dnsmasq as the test zone's upstream resolver
    bind9-dnsutils dnsmasq-base
    # the Houdini corpus (../shared/houdini) run by the test suite
    bash-builtins busybox curl diffutils gdb p7zip-full patch vim-tiny xz-utils
    # the default-policy corpus (tests/default-policy): the user's deputies and schedulers
    tmux screen at cron dbus-daemon dbus-bin bsdutils
    # benchmarks (bench/): comparison points where Debian has them
    strace bubblewrap hyperfine
    # another sandbox that runs inside sessions (tests/layers)
    firejail
    # the MCP clients' runtime (scripts/install-npm-tools.sh brings the clients)
    nodejs
    # what Anthropic's sandbox runtime (srt, from npm) needs, run inside sessions by tests/layers
    ripgrep socat
)

log=${CB_INSTALL_LOG:-/tmp/cottonbox-install-deps.log}
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# npm: Debian's package, unless a nodejs that carries its own npm is installed.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: everything is installed"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing ${missing[*]}; run this script as root" >&2
    exit 1
fi
echo "install-deps: installing ${#missing[@]} packages (apt's output: $log)"
export DEBIAN_FRONTEND=noninteractive
# The package manager's chatter goes to the log; on failure its end is shown.
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "install-deps: apt-get failed; the whole output is in $log" >&2
    exit 1
fi
echo "install-deps: done"
