#!/usr/bin/env bash
# check_kill.sh TEST_KILL MPIEXEC [FLAGS...]: SIGKILL of one rank inside a
# 16 MiB collective (test_kill, 3 ranks): the job ends within 120 s with a
# failure, no test_kill process is left, nothing of topocoll's is left in
# /dev/shm, and the next job (test_kill --no-kill) passes.
# Prints "check_kill: all passed" and exits 0 only if every check passed.
. "$(dirname "$0")/common.sh"
robust_init check_kill 2 "TEST_KILL MPIEXEC [FLAGS...]" "$@"
bin=$1; shift
# (the job's output, on failure)
bad() { echo "check_kill: FAILED: $*"; sed 's/^/  output: /' "$tmp/out" | tail -20; fail=1; }
shm_ours() { ls /dev/shm 2>/dev/null | grep -c '^topocoll-'; }
before=$(shm_ours)

t0=$SECONDS
timeout -k 10 120 "$@" -np 3 env TOPOCOLL_COMM_LAZY=0 "$bin" >"$tmp/out" 2>&1
rc=$?
took=$((SECONDS - t0))
((rc != 0)) || bad "the job did not fail"
((took < 115)) || bad "the job hung (killed after 120 s)"   # (mpiexec itself may exit 137)
grep -q 'kills itself' "$tmp/out" || bad "the killing rank never started"
echo "check_kill: the job ended in $took s (exit $rc)"
sleep 1
left=$(pgrep -fc -- "$bin\$") || true
[ "${left:-0}" = 0 ] || { bad "$left test_kill processes left"; pkill -9 -f -- "$bin\$"; }
[ "$(shm_ours)" = "$before" ] || bad "/dev/shm holds $(shm_ours) topocoll segments (before: $before)"

timeout -k 10 120 "$@" -np 3 "$bin" --no-kill >"$tmp/out" 2>&1 || bad "the next job failed"
grep -q 'test_kill np=3: .* 0 failed' "$tmp/out" || bad "the next job's results"

robust_end
