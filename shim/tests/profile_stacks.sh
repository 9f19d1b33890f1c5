#!/bin/sh
# SPDX-License-Identifier: MIT
# qlock-run --profile's stacks, on a C++ program whose locks are taken
# through wrapper classes (wrapped.cc): the sites are the user's functions
# (deposit, withdraw, audit; tally, whose std::lock_guard is inlined, at
# its own line), each with its whole stack, and so is where
# each lock was first taken; the JSON's
# stacks add up to the lock's contended acquisitions; --profile=FILE.pb.gz
# opens in `go tool pprof -top` (where Go is installed); --profile=FILE.folded
# is folded stacks, which the report generator turns into a flame graph
# (both go on through inlined functions: tally's std::mutex::lock);
# a stripped build still has its stacks (module+offset); --profile-depth=0
# names the lock calls themselves; --profile-wrapper adds a wrapper, and so
# do --wrapper and --lockdep-wrapper (one rule, lockdep's and the profile's).
#   profile_stacks.sh RUN SOURCE PROG PROG_STRIPPED FLAMEGRAPH_PY
set -u
run=$1 src=$2 prog=$3 stripped=$4 flame=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
line_of() { grep -n "$1" "$src" | head -n 1 | cut -d: -f1; }
dep=$(line_of SITE_DEPOSIT) wd=$(line_of SITE_WITHDRAW) au=$(line_of SITE_AUDIT)
ta=$(line_of SITE_TALLY)
bounded() { timeout 120 "$@"; }
# 4 threads of 500 rounds each (the holder yields inside): contended on
# any machine; beside busy processes, where a yield can cost a time
# slice, a run of 2000 rounds took a minute.
rounds=500
expect_in() { # label, file, fixed string
	if grep -qF -- "$3" "$2"; then ok "$1: $3"; else
		bad "$1: no '$3' in the report"; sed 's/^/     | /' "$2"; fi
}
expect_site() { # label, file, site: a "waited at" line of the text report
	if grep -F -- "$3: " "$2" | grep -qE '^    (waited at|         ) '; then ok "$1: $3"; else
		bad "$1: no site '$3' in the report"; sed 's/^/     | /' "$2"; fi
}
expect_out() { # label, file, fixed string
	if grep -qF -- "$3" "$2"; then bad "$1: '$3' in the report"; sed 's/^/     | /' "$2"; else
		ok "$1: no '$3'"; fi
}
have_py=false
command -v python3 >/dev/null 2>&1 && have_py=true

# 1. Text: the sites are the user's functions, each with its stack.
bounded "$run" --profile -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "text: exit status"
expect_site "sites" "$work/r" "deposit(Account&, long) (wrapped.cc:$dep)"
expect_site "sites" "$work/r" "withdraw(Account&, long) (wrapped.cc:$wd)"
expect_in "stack" "$work/r" "stack: Mutex::Lock <- MutexLock::MutexLock <- deposit <- worker"
expect_in "stack" "$work/r" "stack: Mutex::Lock <- withdraw <- worker"
if grep -E '^    (waited at|         ) (Mutex::Lock|MutexLock::MutexLock|Journal::lock)\(' "$work/r"; then
	bad "a wrapper named as a site"; else ok "no wrapper named as a site"; fi
expect_in "hint" "$work/r" "hint: "
# A lock is named where user code first took it, through its wrappers.
expect_in "first locked at" "$work/r" "first locked at deposit(Account&, long) (wrapped.cc:$dep)"
if grep -E 'first locked at (Mutex::Lock|MutexLock::MutexLock|Journal::lock)\(' "$work/r"; then
	bad "a wrapper named as where a lock was first taken"; else ok "first locked at: no wrapper"; fi
if grep -q "audit(Account const&) (wrapped.cc" "$work/r"; then
	expect_site "sites" "$work/r" "audit(Account const&) (wrapped.cc:$au)"
else
	echo "note the journal's lock was not contended this run"
fi
# std::lock_guard's lock call is inlined into tally: the site is its line.
expect_site "inlined" "$work/r" "tally(long) (wrapped.cc:$ta)"
expect_out "inlined" "$work/r" "gthr-default.h:"

# 2. JSON: each contended lock's stacks add up to its contended
#    acquisitions; their frames are whole stacks, wrappers included.
bounded "$run" --profile="$work/p.json" -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "json: exit status"
if $have_py; then
	if python3 - "$work/p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["stack_depth"] == 8 and r["stack_sample"] == 8, r
for l in r["locks"]:
    if not l["contended"]:
        continue
    st = l["stacks"]
    assert st, l
    assert sum(s["count"] for s in st) == l["contended"], l
    assert abs(sum(s["wait_ns"] for s in st) - l["wait_ns"]["total"]) <= len(st), l
    for s in st:
        assert 1 <= len(s["frames"]) <= 8, s
acct = [l for l in r["locks"] if any(s["site"].startswith("deposit(") for s in l["stacks"])]
assert len(acct) == 1, r["locks"]
frames = [f for s in acct[0]["stacks"] for f in s["frames"]]
assert any(f.startswith("Mutex::Lock() (wrapped.cc:") for f in frames), frames
assert any(f.startswith("worker(long) (wrapped.cc:") for f in frames), frames
print("json: %d stacks of the account's lock, %d waits" %
      (len(acct[0]["stacks"]), acct[0]["contended"]))
PY
	then ok "json: stacks add up to each lock's contended acquisitions, whole stacks"
	else bad "json"; cat "$work/p.json"; fi
fi

# 3. pprof: gzip'd profile.proto; go tool pprof -top reads it.
bounded "$run" --profile="$work/p.pb.gz" -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "pprof: exit status"
[ -s "$work/r" ] && { bad "--profile=FILE.pb.gz printed on stderr"; cat "$work/r"; }
if $have_py; then
	python3 - "$work/p.pb.gz" <<'PY' && ok "pprof: gzip and the string table" || bad "pprof: not a gzip'd profile"
import gzip, sys
b = gzip.open(sys.argv[1]).read()
for s in (b"contentions", b"count", b"delay", b"nanoseconds", b"deposit", b"Mutex::Lock"):
    assert s in b, s
PY
fi
go=$(command -v go 2>/dev/null || true)
[ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
if [ -n "$go" ]; then
	# Go 1.24 and later build pprof at its first use (minutes, then cached).
	# -nodefraction=0: every function, however little it waited.
	timeout 540 "$go" tool pprof -top -nodefraction=0 "$work/p.pb.gz" >"$work/top" 2>"$work/top.err" ||
		{ bad "go tool pprof -top: exit status"; cat "$work/top.err"; }
	sed 's/^/     | /' "$work/top"
	expect_in "go tool pprof -top" "$work/top" "Type: delay"
	for f in Mutex::Lock MutexLock::MutexLock deposit withdraw worker; do
		grep -qE " $f\$" "$work/top" && ok "go tool pprof -top: $f" || bad "go tool pprof -top: no $f"
	done
	# tally's std::mutex::lock() is inlined: a line of tally's location.
	bounded "$go" tool pprof -traces "$work/p.pb.gz" >"$work/traces" 2>/dev/null
	expect_in "go tool pprof -traces" "$work/traces" "std::mutex::lock (inline)"
	bounded "$go" tool pprof -top -sample_index=contentions "$work/p.pb.gz" >"$work/top" 2>/dev/null
	expect_in "go tool pprof -sample_index=contentions" "$work/top" "Type: contentions"
else
	echo "skip go tool pprof: Go is not installed"
fi

# 4. Folded stacks, and the flame graph the report generator makes of them.
bounded "$run" --profile="$work/p.folded" -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "folded: exit status"
if grep -qvE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$work/p.folded"; then
	bad "folded: a line is not 'frame;...;frame VALUE'"; cat "$work/p.folded"
else
	ok "folded: $(wc -l <"$work/p.folded") lines of 'frame;...;frame VALUE'"
fi
expect_in "folded" "$work/p.folded" ";worker;deposit;MutexLock::MutexLock;Mutex::Lock "
expect_in "folded" "$work/p.folded" ";worker;withdraw;Mutex::Lock "
expect_in "folded" "$work/p.folded" ";worker;tally;std::lock_guard<std::mutex>::lock_guard;std::mutex::lock"
if $have_py; then
	if python3 "$flame" "$work/p.folded" -o "$work/p.svg" --title "wrapped" >"$work/f" 2>&1 &&
	   python3 - "$work/p.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert t.tag == ns + "svg", t.tag
titles = [e.text for e in t.iter(ns + "title")]
rects = list(t.iter(ns + "rect"))
for f in ("deposit", "withdraw", "Mutex::Lock", "worker"):
    assert any(x.startswith(f + " (") for x in titles), (f, titles)
assert len(rects) >= 8, len(rects)
PY
	then ok "flame graph: an SVG with a box per frame ($(cat "$work/f"))"
	else bad "flame graph"; cat "$work/f"; fi
fi

# 5. Stripped: the stacks are module+offset, the program runs as before.
bounded "$run" --profile -- "$stripped" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "stripped: exit status"
m=$(basename "$stripped")
expect_in "stripped" "$work/r" "waited at $m+0x"
expect_in "stripped" "$work/r" "stack: $m+0x"

# 6. --profile-depth=0: no stacks; the sites are the lock calls.
bounded "$run" --profile --profile-depth=0 -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" || bad "depth 0: exit status"
expect_in "--profile-depth=0" "$work/r" "waited at Mutex::Lock() (wrapped.cc:"
expect_out "--profile-depth=0" "$work/r" "stack:"

# 7. --profile-wrapper: withdraw made a wrapper, its caller is the site.
bounded "$run" --profile --profile-wrapper=withdraw -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" ||
	bad "--profile-wrapper: exit status"
grep -E '^    (waited at|         ) worker\(long\) \(wrapped.cc:' "$work/r" >/dev/null &&
	ok "--profile-wrapper=withdraw: worker(long) is a site" || { bad "--profile-wrapper=withdraw: worker(long) is no site"; cat "$work/r"; }
expect_out "--profile-wrapper=withdraw" "$work/r" "withdraw(Account&, long) (wrapped.cc:"

# 8. The wrapper rule is lockdep's too: --wrapper, and --lockdep-wrapper
#    (which adds --lockdep), make withdraw a wrapper for the profile alike.
for opt in --wrapper=withdraw --lockdep-wrapper=withdraw; do
	bounded "$run" --profile "$opt" -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" ||
		bad "$opt: exit status"
	grep -E '^    (waited at|         ) worker\(long\) \(wrapped.cc:' "$work/r" >/dev/null &&
		ok "$opt: worker(long) is a site" || { bad "$opt: worker(long) is no site"; cat "$work/r"; }
	expect_out "$opt" "$work/r" "withdraw(Account&, long) (wrapped.cc:"
done

echo "profile_stacks: $pass passed, $fail failed"
[ $fail -eq 0 ]
