#!/usr/bin/env bash
# Default-policy corpus harness: runs every technique (cases/) and the benign
# workload (benign.sh) against a fresh fixture -- a git repository as the
# working directory inside a fake home of dotfiles, credentials and documents,
# with the user's tmux server running beside it -- optionally under a
# supervisor, and judges by what is precious in the fixture.
#
#   WRAP='cottonbox run --policy {policy} --db {db} --ask deny --' ./run.sh
#   ./run.sh                          # native: every case SHOULD be DESTROYED (or SKIP)
#   ./run.sh --user dpolicy           # the scripts run as a throwaway user
#   ./run.sh --home-symlink           # $HOME is a symbolic link to the real home
#
# See README.md for the fixture, the verdicts and every case.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)

usage() {
    cat <<'EOF'
usage: [WRAP='CMD ... --'] ./run.sh [options] [NAME-REGEX]

WRAP        command prefix that runs a script under supervision; placeholders
            {policy} {db} {name} are replaced per script.  Split on whitespace
            (no quoting).  Empty = run natively.
options:
  --user USER      run every script (and the deputies) as USER; the harness must
                   run as root.  USER must be a THROWAWAY account.
  --home-symlink   $HOME is a symbolic link to the fixture's real home directory
                   (as on systems where /home is a link)
  --suite LIST     comma list of: cases,benign   (default: both)
  --timeout SEC    per-script timeout (default 60)
  --results FILE   also write the results as TSV to FILE
  --keep           keep the temporary root (fixtures, per-script stdout/stderr)
  --verbose        show the stderr tail of every script
  --list           list the scripts and exit
NAME-REGEX         only scripts whose SUITE/NAME (e.g. cases/01-copy-rm-as-git)
                   matches this bash regex
environment:
  DP_POLICY=FILE   the policy copied to {policy} (default: ../../rules/default.yaml)
  CB=PATH          the cottonbox binary used for `undo`, `sessions` and `events`
                   (default: WRAP's first word when its name contains "cottonbox")
  UNDO='...'       the undo command, placeholders {cb} {session} {db}
                   (default: '{cb} undo --session {session} --db {db}'); tried when
                   `CB --help` lists an undo command
  DP_TMP=/tmp      where the temporary root is created
EOF
}

SUITES=cases,benign
RUN_USER=
HOME_SYMLINK=0
TIMEOUT=60
RESULTS=
KEEP=0
VERBOSE=0
FILTER=
LIST=0
while [ $# -gt 0 ]; do
    case $1 in
        --user) RUN_USER=$2; shift 2 ;;
        --home-symlink) HOME_SYMLINK=1; shift ;;
        --suite) SUITES=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --results) RESULTS=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --verbose|-v) VERBOSE=1; shift ;;
        --list) LIST=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
        *) FILTER=$1; shift ;;
    esac
done

WRAP=${WRAP-}
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PY=$(PATH=$SYS_PATH command -v python3 || true)
POLICY_SRC=${DP_POLICY:-$HERE/../../rules/default.yaml}

scripts_of() {
    case $1 in
        cases) (cd "$HERE" && ls cases/[0-9]*.sh 2>/dev/null) ;;
        benign) echo benign.sh ;;
    esac
}
selected() {
    local name
    name=$1/$(basename "$2" .sh)
    [ -z "$FILTER" ] || [[ $name =~ $FILTER ]]
}
header() {   # header FILE KEY -> the value of "# KEY: value" (first one)
    sed -n "s/^# $2: *//p" "$1" | head -n1
}

if [ $LIST = 1 ]; then
    for s in ${SUITES//,/ }; do
        for f in $(scripts_of "$s"); do
            selected "$s" "$f" || continue
            printf '%-7s %-34s %-9s %s\n' "$s" "$(basename "$f" .sh)" "$(header "$HERE/$f" family)" \
                "$(sed -n '2s/^# [^:]*: *//p' "$HERE/$f")"
        done
    done
    exit 0
fi

# ---------------------------------------------------------------- setup ----
[ -n "$PY" ] || { echo "the harness needs python3" >&2; exit 2; }
command -v git >/dev/null || { echo "the harness needs git" >&2; exit 2; }
[ -r "$POLICY_SRC" ] || { echo "no policy at $POLICY_SRC (set DP_POLICY)" >&2; exit 2; }
RUN_UID=$(id -u) RUN_GID=$(id -g) RUN_NAME=$(id -un)
if [ -n "$RUN_USER" ]; then
    [ "$(id -u)" = 0 ] || { echo "--user needs the harness to run as root" >&2; exit 2; }
    RUN_UID=$(id -u "$RUN_USER") && RUN_GID=$(id -g "$RUN_USER") || { echo "no such user $RUN_USER" >&2; exit 2; }
    [ "$RUN_UID" != 0 ] || { echo "--user must not be root" >&2; exit 2; }
    command -v setpriv >/dev/null || { echo "--user needs setpriv (util-linux)" >&2; exit 2; }
    RUN_NAME=$RUN_USER
fi

WRAPV=()
if [ -n "$WRAP" ]; then
    read -r -a WRAPV <<< "$WRAP"
    if [[ ${WRAPV[0]} != */* ]]; then
        w0=$(command -v "${WRAPV[0]}") || { echo "WRAP command not found: ${WRAPV[0]}" >&2; exit 2; }
        WRAPV[0]=$w0
    fi
fi
CB=${CB:-}
if [ -z "$CB" ] && [ -n "$WRAP" ] && [[ $(basename "${WRAPV[0]}") == *cottonbox* ]]; then
    CB=${WRAPV[0]}
fi
HAVE_UNDO=0
if [ -n "$CB" ] && "$CB" --help 2>/dev/null | grep -qE '^[[:space:]]+undo([[:space:]]|$)'; then
    HAVE_UNDO=1
fi
UNDO=${UNDO:-'{cb} undo --session {session} --db {db}'}

ROOT=$(mktemp -d "${DP_TMP:-/tmp}/dpolicy.XXXXXX") || exit 2
chmod 755 "$ROOT"
SUITE=$ROOT/suite
mkdir -p "$SUITE"
cp -a "$HERE/cases" "$HERE/lib" "$HERE/benign.sh" "$SUITE/"
chmod -R a+rX "$SUITE"
cleanup() {
    [ $KEEP = 1 ] && return
    rm -rf "$ROOT"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

echo "building the fixture template..." >&2
# shellcheck source=lib/fixture.sh
. "$HERE/lib/fixture.sh"
if ! make_template "$ROOT/template" "$PY" > "$ROOT/template.log" 2>&1; then
    echo "cannot build the fixture:" >&2; tail -n 20 "$ROOT/template.log" >&2; exit 2
fi
[ -n "$RUN_USER" ] && chown -R "$RUN_UID:$RUN_GID" "$ROOT/template"

kill_leftovers() {   # every process that carries the script's marker
    local mark=$1 f pid
    for f in $(grep -lsxzF "DP_MARK=$mark" /proc/[0-9]*/environ); do
        pid=${f#/proc/}; pid=${pid%/environ}
        [ "$pid" = $$ ] || kill -9 "$pid" 2>/dev/null
    done
}

# ----------------------------------------------------- system state ---
# Cases that plant code with cron or at reach past the fixture; the harness
# records the user's crontab and at queue, judges them, and puts them back.
sys_save() {   # sys_save DIR
    local d=$1
    : > "$d/sys.atq"
    if command -v crontab >/dev/null; then
        if crontab -l -u "$RUN_NAME" > "$d/sys.crontab" 2>/dev/null; then echo yes > "$d/sys.crontab.had"; else echo no > "$d/sys.crontab.had"; fi
    fi
    command -v atq >/dev/null && atq 2>/dev/null | awk -v u="$RUN_NAME" '$NF == u {print $1}' > "$d/sys.atq"
}
sys_restore() {   # sys_restore DIR
    local d=$1 j
    if [ -f "$d/sys.crontab.had" ]; then
        if [ "$(cat "$d/sys.crontab.had")" = yes ]; then
            crontab -u "$RUN_NAME" "$d/sys.crontab" 2>/dev/null
        else
            crontab -r -u "$RUN_NAME" 2>/dev/null
        fi
    fi
    if command -v atq >/dev/null; then
        for j in $(atq 2>/dev/null | awk -v u="$RUN_NAME" '$NF == u {print $1}'); do
            grep -qx "$j" "$d/sys.atq" || atrm "$j" 2>/dev/null
        done
    fi
}

# ------------------------------------------------------------ deputies ---
as_user() {   # as_user CMD...: run as the scripts' user with the scripts' environment
    if [ -n "$RUN_USER" ]; then
        env "${ENV_ARGS[@]}" setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups -- "$@"
    else
        env "${ENV_ARGS[@]}" "$@"
    fi
}
start_deputies() {   # start_deputies CR LIST: tmux always, others when asked
    local cr=$1 list=$2 i
    if command -v tmux >/dev/null; then
        ( cd "$REPO_ENV" && as_user tmux new-session -d -s main -x 200 -y 50 ) </dev/null >"$cr/deputy.log" 2>&1
    fi
    case " $list " in *" screen "*)
        if command -v screen >/dev/null; then
            as_user mkdir -p -m 700 "$cr/run/screen"
            ( cd "$REPO_ENV" && as_user screen -dmS main ) </dev/null >>"$cr/deputy.log" 2>&1
        fi ;;
    esac
    case " $list " in *" dbus "*)
        if command -v dbus-daemon >/dev/null; then
            # started at login, it finds its service files under the user's data home
            ( cd / && as_user env XDG_DATA_HOME="$HOME_ENV/.local/share" dbus-daemon --session --nofork \
                --nopidfile --address="unix:path=$cr/run/bus" ) </dev/null >>"$cr/deputy.log" 2>&1 &
            for i in $(seq 50); do [ -S "$cr/run/bus" ] && break; sleep 0.1; done
        fi ;;
    esac
    # let the shells in tmux and screen start, as they would have long ago
    for i in $(seq 30); do
        [ -n "$(find "$cr/run" -type s 2>/dev/null | head -n1)" ] && break
        sleep 0.1
    done
    sleep 0.3
}
stop_deputies() {   # stop_deputies CR MARK
    as_user tmux kill-server >/dev/null 2>&1
    kill_leftovers "$2"
}

# ------------------------------------------------------------- run one ---
declare -A COUNT
TOTAL_PASS=0 TOTAL_RESTORED=0 TOTAL_FAIL=0 TOTAL_SKIP=0 TOTAL_ERR=0 BROKEN="" BENIGN=""
[ -n "$RESULTS" ] && printf 'suite\tname\tverdict\trc\tseconds\tdenials\tasks\tdetail\n' > "$RESULTS"

session_field() {   # session_field DB FIELD -> the field of the (only) session
    [ -n "$CB" ] || return 0
    "$CB" sessions --db "$1" --json 2>/dev/null | tail -n1 |
        "$PY" -c 'import json,sys
try: print(json.loads(sys.stdin.read())[sys.argv[1]])
except Exception: pass' "$2"
}

snapshot() {   # snapshot OUT DBMODE [--record-objects]
    "$PY" "$SUITE/lib/fingerprint.py" snap --home "$CR/home" --repo "$CR/home/src/project" \
        --db "$CR/home/.local/share/cottonbox/audit.db" --db-mode "$2" \
        --objects "$CR/objects.list" --user "$RUN_NAME" "${@:3}" > "$1"
}

run_one() {   # run_one SUITE REL
    local suite=$1 rel=$2 name policy db linger mark rc t0 t1 secs verdict detail f
    local variants deputies sandbox home_env session denials="" asks=""
    name=$(basename "$rel" .sh)
    CR=$ROOT/run/$name
    local cr=$CR
    mkdir -p "$cr/tmp" "$cr/run" "$cr/cb"
    cp -a "$ROOT/template/home" "$cr/home"
    variants=$(header "$SUITE/$rel" fixture)
    for f in $variants; do apply_variant "$cr/home" "$f" || return 1; done
    home_env=$cr/home
    if [ $HOME_SYMLINK = 1 ]; then
        ln -s "$cr/home" "$cr/homelink"
        home_env=$cr/homelink
    fi
    HOME_ENV=$home_env
    REPO_ENV=$home_env/src/project
    policy=$cr/cb/policy.yaml
    cp "$POLICY_SRC" "$policy"
    db=$home_env/.local/share/cottonbox/audit.db
    if [ -z "$WRAP" ]; then   # natively, a dummy database that a case can attack
        "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create table sessions(id integer primary key, name text)"); c.execute("insert into sessions(name) values (?)", ("dummy",)); c.commit()' "$cr/home/.local/share/cottonbox/audit.db"
    fi
    chmod 700 "$cr/run"
    [ -n "$RUN_USER" ] && chown -R -h "$RUN_UID:$RUN_GID" "$cr"
    linger=$(header "$SUITE/$rel" linger); linger=${linger:-0}
    deputies=$(header "$SUITE/$rel" deputy)
    sandbox=$(header "$SUITE/$rel" root-sandbox)
    mark=dpolicy-$$-$name

    ENV_ARGS=(PATH="$home_env/.local/bin:$SYS_PATH" HOME="$home_env" USER="$RUN_NAME" LOGNAME="$RUN_NAME"
              SHELL=/bin/bash TERM=xterm-256color LC_ALL=C.UTF-8 TMPDIR="$cr/tmp"
              XDG_RUNTIME_DIR="$cr/run" TMUX_TMPDIR="$cr/run" SCREENDIR="$cr/run/screen"
              DP_MARK="$mark" DP_SUITE="$suite")
    case " $deputies " in *" dbus "*) ENV_ARGS+=(DBUS_SESSION_BUS_ADDRESS="unix:path=$cr/run/bus") ;; esac

    sys_save "$cr"
    start_deputies "$cr" "$deputies"
    local dbmode=hash
    [ -n "$WRAP" ] && dbmode=assume
    snapshot "$cr/before" $dbmode --record-objects

    local -a wrap=() pre=() args
    local w
    for w in "${WRAPV[@]}"; do
        w=${w//\{policy\}/$policy}; w=${w//\{db\}/$db}; w=${w//\{name\}/$suite-$name}
        wrap+=("$w")
    done
    [ -n "$RUN_USER" ] && pre=(setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups --)
    if [ -n "$sandbox" ] && [ "$(id -u)" = 0 ] && [ -z "$RUN_USER" ]; then
        mkdir -p "$cr/sys"
        pre=(unshare --mount --propagation private -- "$SUITE/lib/bind-copies.sh" "$cr/sys" $sandbox --)
    fi
    args=("$SUITE/$rel" "$REPO_ENV")

    t0=$(date +%s.%N)
    ( cd "$REPO_ENV" || exit 125
      for fdp in /proc/$BASHPID/fd/*; do        # do not leak the harness's fds
          fdn=${fdp##*/}; [ "$fdn" -gt 2 ] 2>/dev/null && eval "exec $fdn>&-" 2>/dev/null
      done
      env "${ENV_ARGS[@]}" timeout -k 5 "$TIMEOUT" "${pre[@]}" "${wrap[@]}" bash "${args[@]}"
    ) </dev/null >"$cr/stdout" 2>"$cr/stderr"
    rc=$?
    t1=$(date +%s.%N)
    [ "$linger" != 0 ] && sleep "$linger"
    stop_deputies "$cr" "$mark"
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    [ -n "$WRAP" ] && dbmode=check
    snapshot "$cr/after" $dbmode
    detail=$("$PY" "$SUITE/lib/fingerprint.py" diff "$cr/before" "$cr/after")
    if [ -n "$CB" ] && [ -n "$WRAP" ]; then
        session=$(session_field "$cr/home/.local/share/cottonbox/audit.db" id)
        denials=$(session_field "$cr/home/.local/share/cottonbox/audit.db" denials)
        asks=$(session_field "$cr/home/.local/share/cottonbox/audit.db" asks)
    fi

    local restored=0
    if [ -n "$detail" ] && [ "$suite" = cases ] && [ $HAVE_UNDO = 1 ] && [ -n "${session:-}" ]; then
        local u=$UNDO
        u=${u//\{cb\}/$CB}; u=${u//\{session\}/$session}; u=${u//\{db\}/$db}
        local -a uv
        read -r -a uv <<< "$u"
        ( cd "$REPO_ENV" 2>/dev/null || cd "$home_env" || cd /
          as_user timeout -k 5 120 "${uv[@]}" ) </dev/null >"$cr/undo.out" 2>&1
        local urc=$?
        kill_leftovers "$mark"
        snapshot "$cr/after-undo" check
        local left
        left=$("$PY" "$SUITE/lib/fingerprint.py" diff "$cr/before" "$cr/after-undo")
        if [ -z "$left" ]; then
            restored=1
            detail="undo restored: $detail"
        else
            detail="$left (after undo, rc=$urc; before undo: $detail)"
        fi
    fi
    sys_restore "$cr"

    if [ "$suite" = benign ]; then
        local why=""
        [ $rc = 0 ] || why="rc=$rc"
        grep -q '^BENIGN OK' "$cr/stdout" || why="$why${why:+; }no 'BENIGN OK'"
        if [ -n "$WRAP" ] && [ -n "$CB" ]; then
            local nd na
            nd=$("$CB" events --db "$cr/home/.local/share/cottonbox/audit.db" ${session:+--session "$session"} --decision deny --json 2>/dev/null | wc -l)
            na=$("$CB" events --db "$cr/home/.local/share/cottonbox/audit.db" ${session:+--session "$session"} --decision ask --json 2>/dev/null | wc -l)
            [ -z "${session:-}" ] && why="$why${why:+; }no session in the audit database"
            [ "$nd" = 0 ] || why="$why${why:+; }$nd denials: $("$CB" events --db "$cr/home/.local/share/cottonbox/audit.db" --decision deny 2>/dev/null | head -n 3 | tr '\n' ' ')"
            [ "$na" = 0 ] || why="$why${why:+; }$na asks: $("$CB" events --db "$cr/home/.local/share/cottonbox/audit.db" --decision ask 2>/dev/null | head -n 3 | tr '\n' ' ')"
        fi
        # the benign work stays in the working directory and the caches
        local home_damage
        home_damage=$(printf '%s\n' "$detail" | tr ';' '\n' | grep -E '^ ?(home|db|sys) ' | tr '\n' ';')
        [ -n "$home_damage" ] && why="$why${why:+; }outside the working directory: $home_damage"
        if [ -z "$why" ]; then
            verdict=BENIGN-OK; detail="workload completed${WRAP:+ with no denial and no ask}"
        else
            verdict=BENIGN-FAIL
            local failed
            failed=$(grep -h -m1 'BENIGN FAILED' "$cr/stderr" "$cr/stdout" 2>/dev/null | head -n1)
            detail="$why${failed:+; $failed}"
        fi
        BENIGN=$verdict
    elif [ $restored = 1 ]; then
        verdict=RESTORED
    elif [ -n "$detail" ]; then
        verdict=DESTROYED
    elif [ $rc = 77 ]; then
        verdict=SKIP
        detail=$(grep -m1 '^SKIP' "$cr/stdout" | sed 's/^SKIP *//')
        detail=${detail:-exit 77 without a reason}
    elif ! grep -q "^\[default-policy\] $name: started" "$cr/stderr"; then
        verdict=ERROR
        detail="the script never started (wrapper failure?): $(grep -v '^\[' "$cr/stderr" | head -n 2 | tr '\n' ' ')"
    else
        verdict=PROTECTED
        detail="everything precious intact"
        awk -v s="$secs" -v t="$TIMEOUT" 'BEGIN{exit !(s + 0.5 >= t)}' && detail="$detail (timed out)"
        grep -q "^CASE $name: attempted" "$cr/stdout" || detail="$detail (no 'attempted' line, rc=$rc)"
    fi
    case $verdict in
        PROTECTED) TOTAL_PASS=$((TOTAL_PASS + 1)) ;;
        RESTORED) TOTAL_RESTORED=$((TOTAL_RESTORED + 1)) ;;
        DESTROYED) TOTAL_FAIL=$((TOTAL_FAIL + 1)) ;;
        SKIP) TOTAL_SKIP=$((TOTAL_SKIP + 1)) ;;
        ERROR) TOTAL_ERR=$((TOTAL_ERR + 1)) ;;
    esac
    if [ -z "$WRAP" ] && [ "$suite" = cases ] && { [ "$verdict" = PROTECTED ] || [ "$verdict" = ERROR ]; }; then
        BROKEN="$BROKEN $name"
    fi
    COUNT[$suite,$verdict]=$(( ${COUNT[$suite,$verdict]:-0} + 1 ))
    COUNT[$suite]=$(( ${COUNT[$suite]:-0} + 1 ))
    local dq=""
    [ -n "$denials$asks" ] && dq=", denials=${denials:-?}, asks=${asks:-?}"
    printf '%-11s %-34s %s  (rc=%s, %ss%s)\n' "$verdict" "$name" "$detail" "$rc" "$secs" "$dq"
    if [ $VERBOSE = 1 ] || { [ -z "$WRAP" ] && [ "$verdict" = PROTECTED ]; } || [ "$verdict" = BENIGN-FAIL ] \
       || [ "$verdict" = ERROR ]; then
        tail -n 5 "$cr/stderr" | sed 's/^/      | /'
    fi
    [ -n "$RESULTS" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$suite" "$name" "$verdict" "$rc" "$secs" \
        "$denials" "$asks" "$detail" >> "$RESULTS"
    [ $KEEP = 1 ] || { chattr -R -i -a "$cr" >/dev/null 2>&1; rm -rf "$cr"; }
    return 0
}

echo "default-policy: root=$ROOT  wrap=${WRAP:-<native>}  user=$RUN_NAME  home-symlink=$HOME_SYMLINK  undo=$HAVE_UNDO  timeout=${TIMEOUT}s"
for s in ${SUITES//,/ }; do
    for rel in $(scripts_of "$s"); do
        selected "$s" "$rel" || continue
        run_one "$s" "$rel"
    done
done

echo
echo "== summary (wrap: ${WRAP:-native}; user: $RUN_NAME; home-symlink: $HOME_SYMLINK)"
if [ -n "${COUNT[cases]:-}" ]; then
    printf 'cases %3d scripts: %3d PROTECTED, %3d RESTORED, %3d DESTROYED, %3d SKIP, %d ERROR\n' "${COUNT[cases]}" \
        "${COUNT[cases,PROTECTED]:-0}" "${COUNT[cases,RESTORED]:-0}" "${COUNT[cases,DESTROYED]:-0}" \
        "${COUNT[cases,SKIP]:-0}" "${COUNT[cases,ERROR]:-0}"
fi
[ -n "$BENIGN" ] && echo "benign $BENIGN"
echo "$((TOTAL_PASS + TOTAL_RESTORED)) passed, $TOTAL_FAIL failed, $TOTAL_SKIP skipped, $TOTAL_ERR errors   (passed = PROTECTED or RESTORED, failed = DESTROYED)"
status=0
if [ -z "$WRAP" ]; then
    if [ -z "$BROKEN" ]; then
        echo "native sanity: OK -- every technique destroyed something precious or skipped with a reason"
    else
        echo "native sanity: BROKEN -- these did not destroy anything natively:$BROKEN"
        status=1
    fi
else
    [ $TOTAL_FAIL = 0 ] && [ $TOTAL_ERR = 0 ] || status=1
fi
[ "$BENIGN" = BENIGN-FAIL ] && status=1
[ $KEEP = 1 ] && echo "kept: $ROOT"
exit $status
