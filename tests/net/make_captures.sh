#!/usr/bin/env bash
# Records the DNS messages real clients send and a real server answers, for
# the parser's tests (tests/net/captures/*.txt; dns_captures_test.cpp reads
# them).  Run as root (a relay serves port 53 on a loopback address, and
# glibc, Python and Node are pointed at it through a resolv.conf bound over
# /etc/resolv.conf in a private mount namespace).  Needs dnsmasq, dig, getent,
# python3 and node.  Talks only to servers it starts on 127.0.0.2 and .3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/captures
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

for i in $(seq 1 40); do echo "127.1.1.$i big.cbtest"; done >"$tmp/hosts"
dnsmasq -C /dev/null -k --no-resolv --no-hosts --addn-hosts="$tmp/hosts" --local=/cbtest/ \
    --listen-address=127.0.0.2 --bind-interfaces --port=5353 --user=root --group=root --pid-file= \
    --host-record=web.cbtest,127.1.0.10,fd00:cb::10 --cname=alias.cbtest,web.cbtest \
    --txt-record=web.cbtest,"v=test" --mx-host=cbtest,web.cbtest,10 --log-facility=/dev/null &
printf 'nameserver 127.0.0.3\n' >"$tmp/resolv.conf"
sleep 0.3

# capture NAME COMMAND...: runs COMMAND with a relay on 127.0.0.3:53 writing to captures/NAME.txt
capture() {
    local name=$1
    shift
    rm -f "$out/$name.txt"
    python3 "$here/capture_relay.py" 127.0.0.3 127.0.0.2 5353 "$out/$name.txt" >"$tmp/ready" &
    local relay=$!
    for _ in $(seq 50); do grep -q ready "$tmp/ready" 2>/dev/null && break; sleep 0.05; done
    "$@" >/dev/null || true
    kill "$relay"
    wait "$relay" 2>/dev/null || true
    echo "$name: $(wc -l <"$out/$name.txt") messages"
}
in_ns() { unshare -m sh -c "mount --bind '$tmp/resolv.conf' /etc/resolv.conf && exec \"\$@\"" sh "$@"; }

capture dig_a_cname dig @127.0.0.3 alias.cbtest A
capture dig_aaaa_tcp dig +tcp @127.0.0.3 web.cbtest AAAA
capture dig_truncated dig +noedns +ignore @127.0.0.3 big.cbtest A
capture dig_tcp_big dig +tcp +noedns @127.0.0.3 big.cbtest A
capture dig_nxdomain dig @127.0.0.3 nope.cbtest A
capture dig_txt_mx sh -c 'dig @127.0.0.3 web.cbtest TXT; dig @127.0.0.3 cbtest MX'
capture glibc_getent in_ns getent ahosts alias.cbtest
capture python_getaddrinfo in_ns python3 -c 'import socket; socket.getaddrinfo("web.cbtest", 443)'
capture node_lookup in_ns node -e 'require("dns").lookup("alias.cbtest", {all: true}, () => {})'
capture node_resolve in_ns node -e 'require("dns").resolve4("alias.cbtest", () => {})'
