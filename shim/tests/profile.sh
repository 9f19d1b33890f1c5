#!/bin/sh
# SPDX-License-Identifier: MIT
# qlock-run --profile: the report names the hot lock by its function and
# file:line (-g build), by its .symtab name (no debug info), by module and
# offset (stripped) or its .dynsym name (stripped, -rdynamic); the JSON
# parses and holds the same, with exact per-lock acquisition counts (300
# mutexes taken in turn); a live ABBA deadlock is reported with both
# threads' sites, each holder named with where it locked its lock,
# whichever --mutex or --rwlock serves it; --stats keeps its table and shows the internal counters
# only with --verbose; waits of 50 ms read between 50 ms and the
# waiter's own measure.
#   profile.sh RUN SOURCE PROG PROG_NODEBUG PROG_STRIPPED PROG_RDYNAMIC_STRIPPED
set -u
run=$1 src=$2 prog=$3 nodebug=$4 stripped=$5 rdyn=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
line_of() { grep -n "$1" "$src" | head -n 1 | cut -d: -f1; }
hot=$(line_of HOT_LOCK_LINE) first=$(line_of HOT_FIRST_LINE)
a1=$(line_of A_FIRST_LINE) a2=$(line_of A_SECOND_LINE)
b1=$(line_of B_FIRST_LINE) b2=$(line_of B_SECOND_LINE)
t1=$(line_of TRY_FIRST_LINE) mh=$(line_of M_HOLD_LINE)
rwr=$(line_of RW_HOLD_R_LINE) rww=$(line_of RW_HOLD_W_LINE)
cw=$(line_of COND_WAIT_LINE)

# Every run bounded: a hang fails the test instead of stalling it.
bounded() { timeout 120 "$@"; }

expect_in() { # label, file, fixed string
	if grep -qF -- "$3" "$2"; then ok "$1: $3"; else
		bad "$1: no '$3' in the report"; sed 's/^/     | /' "$2"; fi
}

# 1. -g build: function and file:line of the hot lock's waiting call site,
#    the condvar's wait in a static function.
bounded "$run" --profile -- "$prog" hot 4 20000 >"$work/o" 2>"$work/r" || bad "hot (-g): exit status"
expect_in "-g build" "$work/r" "waited at hot_path (profile_prog.c:$hot)"
expect_in "-g build" "$work/r" "first locked at hot_main (profile_prog.c:$first)"
expect_in "-g build" "$work/r" "first waited on at wait_ready (profile_prog.c:$cw)"
expect_in "-g build" "$work/r" "signals 2"
grep -q "^#1  mutex $(cut -d' ' -f2 "$work/o")," "$work/r" && ok "-g build: the hot mutex ranks first" ||
	echo "note the hot mutex is not first (another lock waited longer this run)"

# 2. No debug info, not stripped: names from .symtab, static ones included.
bounded "$run" --profile -- "$nodebug" hot 4 20000 >"$work/o" 2>"$work/r" || bad "hot (no -g): exit status"
m=$(basename "$nodebug")
expect_in "no debug info" "$work/r" "waited at hot_path+0x"
expect_in "no debug info" "$work/r" "($m)"
expect_in "no debug info (static function)" "$work/r" "first waited on at wait_ready+0x"

# 3. Stripped: the module and offset, which addr2line maps back with the
#    unstripped twin.
bounded "$run" --profile -- "$stripped" hot 4 20000 >"$work/o" 2>"$work/r" || bad "hot (stripped): exit status"
m=$(basename "$stripped")
expect_in "stripped" "$work/r" "waited at $m+0x"
off=$(sed -n "s/.*waited at $m+\(0x[0-9a-f]*\):.*/\1/p" "$work/r" | head -n 1)
if [ -n "$off" ] && command -v addr2line >/dev/null 2>&1; then
	f=$(addr2line -f -e "$nodebug" "$(printf '0x%x' $((off - 1)))" | head -n 1)
	[ "$f" = hot_path ] && ok "stripped: addr2line -f -e (unstripped) $off-1 = $f" ||
		bad "stripped: $off maps to '$f', not hot_path"
fi

# 4. Stripped, linked with -rdynamic: exported functions by their .dynsym
#    name; a static one by module and offset.
bounded "$run" --profile -- "$rdyn" hot 4 20000 >"$work/o" 2>"$work/r" || bad "hot (-rdynamic, stripped): exit status"
m=$(basename "$rdyn")
expect_in "-rdynamic stripped" "$work/r" "waited at hot_path+0x"
expect_in "-rdynamic stripped (static function)" "$work/r" "first waited on at $m+0x"

# 5. JSON.
bounded "$run" --profile="$work/p.json" -- "$prog" hot 4 20000 >"$work/o" 2>"$work/r" || bad "json: exit status"
[ -s "$work/r" ] && { bad "--profile=FILE.json still printed on stderr"; cat "$work/r"; }
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$work/p.json" "hot_path (profile_prog.c:$hot)" "wait_ready (profile_prog.c:$cw)" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sites = [w["site"] for l in r["locks"] for w in l["waited_at"]]
assert sys.argv[2] in sites, sites
hot = [l for l in r["locks"] if any(w["site"] == sys.argv[2] for w in l["waited_at"])][0]
assert hot["type"] == "mutex" and hot["contended"] >= 1 and hot["acquired"] >= hot["contended"]
assert hot["wait_ns"]["max"] >= hot["wait_ns"]["p50"] >= 0 and hot["hold_ns"]["timed"] >= 1
# Counted per thread, added up at exit: every wait at a site, no more
# holds timed than waits.
assert sum(w["count"] for w in hot["waited_at"]) + hot["waited_at_other_sites"] == hot["contended"], hot
assert hot["hold_ns"]["timed"] <= hot["contended"] and hot["hold_ns"]["max"] >= hot["hold_ns"]["p50"], hot
rw = [l for l in r["locks"] if l["type"] == "rwlock"]
assert rw and rw[0]["reads"]["acquired"] > 0 and rw[0]["writes"]["acquired"] > 0, rw
c = r["conds"][0]
assert c["first_waited_at"] == sys.argv[3] and c["waits"] >= 1 and c["signals"] == 2, c
print("json: %d locks, %d contended, hot mutex waited %d times" %
      (r["locks_used"], r["locks_contended"], hot["contended"]))
EOF
	then ok "json parses, names the hot lock, the rwlock's reads and writes, the condvar"
	else bad "json"; cat "$work/p.json"; fi
else
	echo "note python3 missing: JSON not parsed"
fi

# 5b. Six mutexes taken in turn by 4 threads: the per-thread counters
#     and detail shares (4 per thread) add up to every acquisition, and
#     each lock's waits to its sites.
bounded "$run" --profile="$work/s.json" -- "$prog" spread 4 6000 >"$work/o" 2>"$work/r" || bad "spread: exit status"
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$work/s.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
sp = [l for l in r["locks"] if (l["first_locked_at"] or "").startswith("spread_worker")]
assert len(sp) == 6, [l["first_locked_at"] for l in r["locks"]]
assert sum(l["acquired"] for l in sp) == 4 * 6000, [l["acquired"] for l in sp]
for l in sp:
    assert sum(w["count"] for w in l["waited_at"]) + l["waited_at_other_sites"] == l["contended"], l
    assert l["contended"] == 0 or l["wait_ns"]["total"] > 0, l
    assert l["hold_ns"] is None or 1 <= l["hold_ns"]["timed"] <= l["contended"], l
print("spread: %d acquisitions, %d contended" % (sum(l["acquired"] for l in sp), sum(l["contended"] for l in sp)))
EOF
	then ok "spread: acquisitions and waits add up across threads"
	else bad "spread"; cat "$work/s.json"; fi
fi

# 5c. 300 mutexes taken in turn by 4 threads, more than a thread keeps
#     counter slots for (slots taken over, flushed, counts on the rows)
#     and more than it has places in front of them (struct pf_front: at
#     least 44 pairs of them share a place, taken in turn):
#     every mutex's acquisitions exact, each waited for at least once (so
#     that the JSON lists it).
bounded "$run" --profile="$work/m.json" -- "$prog" many 4 20 >"$work/o" 2>"$work/r" || bad "many: exit status"
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$work/m.json" "$work/o" 4 20 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
_, base, stride, n = open(sys.argv[2]).read().split()
base, stride, n = int(base, 16), int(stride), int(n)
threads, passes = int(sys.argv[3]), int(sys.argv[4])
got = {}
for l in r["locks"]:
    k, off = divmod(int(l["address"], 16) - base, stride)
    if off == 0 and 0 <= k < n:
        got[k] = l
assert len(got) == n, (len(got), n)
for k, l in got.items():
    want = 2 + threads * passes * (k % 5 + 1)
    assert l["acquired"] == want and l["contended"] >= 1, (k, want, l)
print("many: %d mutexes, %d acquisitions, each exact" % (n, sum(l["acquired"] for l in got.values())))
EOF
	then ok "many: every mutex's acquisitions exact"
	else bad "many"; cat "$work/o" "$work/r"; fi
fi

# 6. A live deadlock, threshold 1 s: the report within a minute, once.
"$run" --profile --deadlock-after=1 -- "$prog" abba >"$work/o" 2>"$work/r" &
pid=$!
n=0
while [ $n -lt 600 ] && ! grep -q "held by.*b_then_a" "$work/r" 2>/dev/null; do
	sleep 0.1
	n=$((n + 1))
done
sleep 2 # a second report would come within this
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if grep -q "deadlock: 2 threads" "$work/r"; then
	ok "deadlock reported: $(grep -c 'deadlock:' "$work/r") time(s)"
	[ "$(grep -c 'deadlock:' "$work/r")" -eq 1 ] || bad "deadlock: reported more than once"
	expect_in "deadlock" "$work/r" "at a_then_b (profile_prog.c:$a2)"
	expect_in "deadlock" "$work/r" "at b_then_a (profile_prog.c:$b2)"
	expect_in "deadlock" "$work/r" "locked at a_then_b (profile_prog.c:$a1)"
	expect_in "deadlock" "$work/r" "locked at b_then_a (profile_prog.c:$b1)"
	expect_in "deadlock" "$work/r" "hint: take these locks in one order everywhere"
else
	bad "deadlock: no report in 60 s"
	cat "$work/r"
fi

# 6b. Each holder of a deadlock's locks named, with where it locked them,
#     whichever algorithm serves the lock: the locks the inline paths take
#     (the tp mutex; the qrwlock's and the tp rwlock's writers and readers)
#     by what the lock objects name, the others (qspinlock and glibc
#     mutexes, rwsem and glibc rwlocks, a trylock's lock) by the held-lock
#     stacks.
dl_run() { # label, qlock-run options and program arguments...
	label=$1
	shift
	rm -f "$work/r" # not the last run's report, while this one starts
	"$run" --profile --deadlock-after=1 "$@" >"$work/o" 2>"$work/r" &
	pid=$!
	n=0
	while [ $n -lt 600 ] && ! grep -q "hint: take these locks" "$work/r" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	grep -q "deadlock: 2 threads" "$work/r" || { bad "$label: no report in 60 s"; cat "$work/r"; }
}
expect_re() { # label, file, extended regex
	if grep -qE -- "$3" "$2"; then ok "$1: $3"; else
		bad "$1: nothing matches '$3' in the report"; sed 's/^/     | /' "$2"; fi
}
for m in tp qspinlock glibc; do
	dl_run "abba --mutex=$m" --mutex=$m -- "$prog" abba
	expect_re "abba --mutex=$m" "$work/r" "held by thread [0-9]+ \(mutex\), locked at a_then_b \(profile_prog.c:$a1\)"
	expect_re "abba --mutex=$m" "$work/r" "held by thread [0-9]+ \(mutex\), locked at b_then_a \(profile_prog.c:$b1\)"
done
dl_run "tryab" -- "$prog" tryab
expect_re "tryab" "$work/r" "held by thread [0-9]+ \(mutex\), locked at try_a_then_b \(profile_prog.c:$t1\)"
expect_re "tryab" "$work/r" "held by thread [0-9]+ \(mutex\), locked at b_then_a \(profile_prog.c:$b1\)"
for r in qrwlock tp rwsem glibc; do
	dl_run "rwab read write --rwlock=$r" --rwlock=$r -- "$prog" rwab read write
	expect_re "rwab read write --rwlock=$r" "$work/r" "waits for rwlock \(write\)"
	expect_re "rwab read write --rwlock=$r" "$work/r" "held by thread [0-9]+ \(rwlock \(read\)\), locked at rw_then_m \(profile_prog.c:$rwr\)"
	expect_re "rwab read write --rwlock=$r" "$work/r" "held by thread [0-9]+ \(mutex\), locked at m_then_rw \(profile_prog.c:$mh\)"
	dl_run "rwab write read --rwlock=$r" --rwlock=$r -- "$prog" rwab write read
	expect_re "rwab write read --rwlock=$r" "$work/r" "waits for rwlock \(read\)"
	expect_re "rwab write read --rwlock=$r" "$work/r" "held by thread [0-9]+ \(rwlock \(write\)\), locked at rw_then_m \(profile_prog.c:$rww\)"
	expect_re "rwab write read --rwlock=$r" "$work/r" "held by thread [0-9]+ \(mutex\), locked at m_then_rw \(profile_prog.c:$mh\)"
done

# 7. --stats: its table first, with the sites; counters only with --verbose.
bounded "$run" --stats -- "$prog" hot 2 5000 >"$work/o" 2>"$work/r" || bad "--stats: exit status"
expect_in "--stats" "$work/r" "most contended"
expect_in "--stats" "$work/r" "hot_main (profile_prog.c:$first)"
grep -q "futex_" "$work/r" && bad "--stats shows internal counters without --verbose" ||
	ok "--stats: no internal counters"
bounded "$run" --stats --verbose -- "$prog" hot 2 5000 >"$work/o" 2>"$work/r" || bad "--stats --verbose: exit status"
expect_in "--stats --verbose" "$work/r" "futex_"

# 8. The clock: four waits of 50 ms or more each (the holder slept that
#    long after the waiter blocked in the lock call) read no less than
#    4 x 50 ms and no more than the waiter measured around its lock calls
#    (the report's wait lies inside the waiter's own interval), each with
#    room for the TSC rate's calibration error (a quarter below, half
#    above); both bounds are orders of events, not speeds, so a loaded
#    machine only widens the gap between them.  A clock at the wrong rate,
#    such as TSC cycles taken for ns (off by 2x or more), reads below the
#    floor, or above the ceiling on a quiet machine (where the waiter
#    measures within a few ms of 200 ms); a wait that slept
#    left to the sampling would count 8 times or not at all, so the
#    waiter's site counts them exactly, beside a site whose many short
#    waits are sampled (the sites add up to the contended acquisitions).
#    Behind --mutex=glibc too, where the drop-in does not see the sleeps
#    and counts every wait that could sleep as one that did.
for how in default glibc; do
	opt=
	[ $how = glibc ] && opt=--mutex=glibc
	if command -v python3 >/dev/null 2>&1; then
		bounded "$run" $opt --profile="$work/s.json" -- "$prog" slow 4 >"$work/o" 2>"$work/r" ||
			bad "slow ($how): exit status"
		if python3 - "$work/s.json" $(cut -d' ' -f2,3 "$work/o") <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
own = int(sys.argv[3])
l = [l for l in r["locks"] if int(l["address"], 16) == int(sys.argv[2], 16)]
assert l and l[0]["contended"] >= 4, r["locks"]
l = l[0]
at = {s["site"].split(" ")[0]: s for s in l["waited_at"]}
w = at["slow_waiter"]
assert w["count"] == 4, l
assert own >= 200e6 and 150e6 <= w["wait_ns"] <= 1.5 * own + 4e6, (w, own)
assert l["wait_ns"]["max"] >= 37.5e6, l
assert sum(s["count"] for s in l["waited_at"]) + l["waited_at_other_sites"] == l["contended"], l
assert all(s["count"] >= 1 for s in l["waited_at"]), l
print("slow: waited %.1f ms, the waiter measured %.1f ms; %d waits in slow_spin" %
      (w["wait_ns"] / 1e6, own / 1e6, at["slow_spin"]["count"] if "slow_spin" in at else 0))
EOF
		then ok "the clock ($how): four waits of 50 ms or more read 200 ms or more, inside the waiter's own measure"
		else bad "the clock ($how): the 50 ms waits"; cat "$work/s.json"; fi
	fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
