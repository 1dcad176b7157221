#!/usr/bin/env bash
# cluster.sh -- an emulated cluster on one Linux host, made of real parts:
# each host is a network namespace with its own veth pair to a bridge in the
# root namespace, its own address in a private /24 that exists only inside
# these namespaces (and the launcher's bridge), its own hostname and IPC
# namespace, and optionally a link rate (tbf in both directions).  MPI jobs are started with the MPI
# library's own launcher (Open MPI's rsh launcher, MPICH's hydra) through an
# agent that runs each host's daemon inside its namespace.  Needs root
# (CAP_NET_ADMIN, CAP_SYS_ADMIN); exits 77 where namespaces cannot be made.
usage() {
  cat <<'EOF'
usage: scripts/cluster.sh COMMAND [ARGS]

  up K [RATE] [--switches S [--uplink RATE]] [--burst BYTES]
                     make K hosts (RATE: a tc rate such as 1gbit or 100mbit,
                     applied with tbf on both ends of each host's link;
                     --burst: its token bucket, default 1 ms at the rate
                     and at least 64 KiB; 3028, two frames, passes no
                     message faster than the rate);
                     prints CLUSTER_ID=... for the other commands.
                     --switches S: a two-level network: the hosts in S
                     blocks of consecutive hosts, each block on its own
                     switch (a bridge), the switches joined by a core
                     switch (the launcher's bridge) through one uplink
                     each, shaped at --uplink (default RATE) both ways;
                     topology.conf in the state directory describes it
                     (Slurm syntax: run --env
                     TOPOCOLL_NETWORK_TOPOLOGY=$CLUSTER_STATE/topology.conf)
  down               remove the cluster: kill what runs on its hosts, delete
                     the namespaces, veths, bridge, /etc/netns entries, state
  run [OPTIONS] [--] PROG ARGS...
                     launch an MPI job across the hosts; exits with its status
      --mpi openmpi|mpich   the MPI library (default $CLUSTER_MPI or openmpi)
      --hosts SPEC          ranks per host: "2,2,1" (host 1 gets 2, host 2
                            gets 2, host 3 gets 1) or "KxP" / "K x P"
                            (K hosts of P); default 1 rank on every host
      --map slot|node       rank order: fill each host in turn (slot,
                            default) or round-robin over the hosts (node;
                            under MPICH only counts that cycling gives)
      --env VAR=VALUE       set VAR for the ranks (repeatable); use this for
                            LD_PRELOAD (not "env LD_PRELOAD=... PROG": under
                            MPICH it is joined with the finalize fix below)
      --bytes               print the bytes each host sent and received on
                            its link during the job
      --quiet               no launch line
  calib [--mpi M] [--iters N] [--reps N]
                     MPI ping-pong between hosts 1 and 2 (scripts/pingpong.c,
                     compiled once per MPI into $CLUSTER_CACHE): one-way
                     latency of 8 B and bandwidth at 4 MiB, then the bytes
                     each host's link carried
  bytes              per-host tx/rx byte counters of the hosts' interfaces
                     (eth0 read inside each namespace), one line per host
  exec HOST [--] CMD ARGS...
                     run a command on HOST (number 1..K or name): inside its
                     namespaces, under its hostname
  hosts              the hosts: name, namespace, address
  reap               kill every process left on the hosts (after a timeout)
  job K [RATE] COMMAND ARGS...
                     one shot: up, then COMMAND (run, calib, exec, bytes,
                     hosts), then down, also when the command fails or the
                     script is interrupted; exits with COMMAND's status

A host is a network namespace (its veth "eth0" to the bridge, address
A.B.C.I/24, no route elsewhere: traffic stays between the hosts and the
launcher at .254) plus, for everything launched on it, its own UTS
namespace (hostname tcID-hI) and IPC namespace.  /dev/shm, /tmp and the pid
namespace are shared by all hosts, so the MPIs must not find a shared-memory
path between them: Open MPI places ranks by host name (vader only between
ranks of one host); MPICH (ch4:ucx) runs with UCX_TLS=tcp,self,sysv,posix
and UCX_NET_DEVICES=eth0, so every inter-host byte goes over TCP on the
hosts' links (UCX's sysv/posix cannot reach another IPC namespace; cma is
left out as it would reach another host through the shared pid namespace);
MPICH's own shared memory serves the ranks of one host.  Open MPI runs with
mpi_yield_when_idle=1 (few cores, more ranks than cores), pml ob1, btl
tcp,vader,self.  The hosts share the machine's cores, which topocoll cannot
see from a host: under MPICH, whose ranks busy-poll, topocoll's waiters nap
(TOPOCOLL_NAP=50, unless set); under Open MPI they yield only (naps cost
its small and medium collectives up to 1.7x, and gained nothing at 2-16
hosts x 2 ranks, docs/scaling.md).

MPICH 4.0's MPI_Finalize can deadlock over UCX's TCP transport when a host
runs 2 or more ranks (disconnects wait for peers already in a PMI barrier;
the barrier was removed upstream, pmodels/mpich pull request 6596).  MPICH
jobs therefore preload scripts/mpich_ucx_finalize.c (compiled into
$CLUSTER_CACHE), which lets the disconnects finish after that barrier;
CLUSTER_MPICH_FINALIZE_FIX=0 turns it off.

Environment:
  CLUSTER_ID     the cluster's short id ([a-z0-9], at most 6 characters);
                 `up` takes it or derives one from its pid; every other
                 command needs it (or CLUSTER_STATE): other clusters may be
                 up on the machine, none is guessed
  CLUSTER_STATE  the state directory (default /tmp/topocoll-cluster-ID)
  CLUSTER_SUBNET the first three octets of the /24 to use (default: a free
                 10.213.N.0/24; the bridge is .254, host i is .i)
  CLUSTER_MPI    default for --mpi
  CLUSTER_UCX_TLS  UCX_TLS for MPICH jobs (default tcp,self,sysv,posix)
  CLUSTER_MPICH_FINALIZE_FIX  0: no finalize fix for MPICH jobs
  CLUSTER_CACHE  where the compiled helpers are kept
                 (default ${XDG_CACHE_HOME:-$HOME/.cache}/emucluster)

Names: namespace and hostname tcID-hI, bridge tcbID, root-side veth tcIDvI.

Exit status: 0, the job's status for run/calib/job, 1 on errors, 77 when
network namespaces, bridges or the UTS/IPC namespaces cannot be made here
(one line saying so is printed; nothing is left behind).
EOF
}
set -euo pipefail

SKIP=77
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
scripts=$(dirname "$self")
lockfile=/tmp/topocoll-cluster.lock

die() { echo "cluster: $*" >&2; exit 1; }
skip() { echo "cluster: SKIPPED: cannot make network namespaces here ($*)"; exit "$SKIP"; }

# ---- state --------------------------------------------------------------------
# $state/state (sourced): ID K RATE PREFIX BRIDGE BRADDR SWITCHES UPLINK
# $state/hosts: one line per host: INDEX NAME NAMESPACE ADDRESS ROOT_VETH
# $state/agent: the rsh/ssh stand-in given to the launchers

# Loads the state of the cluster named by CLUSTER_STATE or CLUSTER_ID (other
# people's clusters may be up on the same machine: never guessed).
load() {
  if [[ -n ${CLUSTER_STATE:-} ]]; then
    state=$CLUSTER_STATE
  elif [[ -n ${CLUSTER_ID:-} ]]; then
    state=/tmp/topocoll-cluster-$CLUSTER_ID
  else
    die "set CLUSTER_ID (printed by 'up') or CLUSTER_STATE to name the cluster"
  fi
  [[ -f $state/state ]] || die "no cluster state in $state (not up?)"
  # shellcheck source=/dev/null
  . "$state/state"
  mapfile -t host_lines <"$state/hosts"
}

# host_field INDEX FIELD (1 name, 2 namespace, 3 address, 4 root veth)
host_field() {
  local a
  read -r -a a <<<"${host_lines[$(($1 - 1))]}"
  echo "${a[$2]}"
}

# Resolves a host given by number or name to its index.
host_index() {
  local i
  for ((i = 1; i <= K; i++)); do
    [[ $1 == "$i" || $1 == "$(host_field "$i" 1)" || $1 == "$(host_field "$i" 3)" ]] && { echo "$i"; return; }
  done
  die "no host $1 (1..$K or a name from 'scripts/cluster.sh hosts')"
}

# ---- up / down ----------------------------------------------------------------
subnet_taken() {   # subnet_taken A.B.C
  local p=$1 f
  ip -4 -o addr show | grep -qF " $p." && return 0
  ip -4 route show | grep -q "^${p//./\\.}\.0/" && return 0
  for f in /tmp/topocoll-cluster-*/state; do
    [[ -f $f ]] && grep -qx "PREFIX=$p" "$f" && return 0
  done
  return 1
}

tbf() {   # tbf [ip-netns-args...] DEV: the rate limit on DEV's egress
  local dev=${*: -1} args=("${@:1:$#-1}") bytes burst
  # burst: --burst, else 1 ms at the rate, at least 64 KiB (a large burst
  # lets 4 MiB messages pass faster than the rate).  tbf cuts a GSO packet
  # longer than the burst into its segments.
  bytes=$(tc_rate_bytes "$RATE")
  burst=${BURST:-$((bytes / 1000))}
  [[ -n $BURST ]] || ((burst >= 65536)) || burst=65536
  tc "${args[@]}" qdisc replace dev "$dev" root tbf rate "$RATE" burst "$burst" latency 50ms
}

tc_rate_bytes() {   # bytes per second of a tc rate (bit, kbit, mbit, gbit, tbit; bps... bytes)
  local r=${1,,} n u
  [[ $r =~ ^([0-9]+(\.[0-9]+)?)([a-z]*)$ ]] || die "RATE $1: not a rate like 1gbit or 100mbit"
  n=${BASH_REMATCH[1]} u=${BASH_REMATCH[3]}
  case $u in
    ""|bit) awk -v n="$n" 'BEGIN { printf "%d", n / 8 }' ;;
    kbit) awk -v n="$n" 'BEGIN { printf "%d", n * 1000 / 8 }' ;;
    mbit) awk -v n="$n" 'BEGIN { printf "%d", n * 1e6 / 8 }' ;;
    gbit) awk -v n="$n" 'BEGIN { printf "%d", n * 1e9 / 8 }' ;;
    tbit) awk -v n="$n" 'BEGIN { printf "%d", n * 1e12 / 8 }' ;;
    bps) awk -v n="$n" 'BEGIN { printf "%d", n }' ;;
    kbps) awk -v n="$n" 'BEGIN { printf "%d", n * 1000 }' ;;
    mbps) awk -v n="$n" 'BEGIN { printf "%d", n * 1e6 }' ;;
    gbps) awk -v n="$n" 'BEGIN { printf "%d", n * 1e9 }' ;;
    *) die "RATE $1: unknown unit $u (bit, kbit, mbit, gbit, tbit, bps, kbps, mbps, gbps)" ;;
  esac
}

write_agent() {
  cat >"$state/agent" <<EOF
#!/usr/bin/env bash
# The rsh/ssh stand-in of cluster $ID: agent [ssh options] HOST COMMAND...
# runs COMMAND (joined by spaces and given to a shell, as ssh does) inside
# HOST's network namespace, in new UTS and IPC namespaces, under HOST's
# hostname (one daemon per host and job: all ranks of a host share them).
set -euo pipefail
while ((\$#)); do
  case \$1 in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;   # ssh options with a value
    -*) shift ;;                           # -x (hydra), -q, -T, ...
    *) break ;;
  esac
done
((\$# >= 2)) || { echo "cluster agent: usage: agent [options] HOST COMMAND..." >&2; exit 255; }
host=\$1; shift
read -r name ns < <(awk -v h="\$host" '\$2 == h || \$4 == h { print \$2, \$3; exit }' "$state/hosts") || true
[[ -n \${ns:-} ]] || { echo "cluster agent: unknown host \$host (cluster $ID)" >&2; exit 255; }
exec ip netns exec "\$ns" unshare -u -i /bin/sh -c 'hostname "\$1" && shift && exec /bin/sh -c "\$*"' sh "\$name" "\$@"
EOF
  chmod +x "$state/agent"
}

# The switch (bridge) host @1 hangs from: the launcher's bridge on a flat
# network; else the bridge of its block of consecutive hosts.
switch_of() {
  ((SWITCHES > 1)) || { echo "$BRIDGE"; return; }
  echo "tcb${ID}S$(( ($1 - 1) * SWITCHES / K + 1 ))"
}

# Two levels: a bridge per switch, joined to the launcher's bridge (the core
# switch) by a veth pair, shaped both ways at UPLINK; and topology.conf.
# (Upper-case letters in these names: no cluster id has one, so no other
# cluster's bridge or veth can bear them.)
switches_up() {
  local s sw up first last
  : >"$state/topology.conf"
  for ((s = 1; s <= SWITCHES; s++)); do
    sw=tcb${ID}S$s up=tc${ID}U$s
    ip link add "$sw" type bridge
    [[ ! -w /proc/sys/net/ipv6/conf/$sw/disable_ipv6 ]] || echo 1 >"/proc/sys/net/ipv6/conf/$sw/disable_ipv6"
    ip link add "$up" type veth peer name "tc${ID}C$s"
    ip link set "$up" master "$sw"
    ip link set "tc${ID}C$s" master "$BRIDGE"
    ip link set "$sw" up
    ip link set "$up" up
    ip link set "tc${ID}C$s" up
    if [[ -n $UPLINK ]]; then RATE=$UPLINK tbf "$up"; RATE=$UPLINK tbf "tc${ID}C$s"; fi
    first=$(( ((s - 1) * K + SWITCHES - 1) / SWITCHES + 1 )) last=$(( (s * K + SWITCHES - 1) / SWITCHES ))
    if ((first == last)); then echo "SwitchName=s$s Nodes=tc$ID-h$first"; else
      echo "SwitchName=s$s Nodes=tc$ID-h[$first-$last]"; fi >>"$state/topology.conf"
  done
  echo "SwitchName=core Switches=s[1-$SWITCHES]" >>"$state/topology.conf"
}

cmd_up() {
  local usage="usage: up K [RATE] [--switches S [--uplink RATE]] [--burst BYTES]"
  (($# >= 1)) || die "$usage"
  K=$1 RATE="" SWITCHES=1 UPLINK="" BURST=""
  shift
  if (($#)) && [[ $1 != --* ]]; then RATE=$1; shift; fi
  while (($#)); do
    case $1 in
      --switches) SWITCHES=${2:?$usage}; shift 2 ;;
      --uplink) UPLINK=${2:?$usage}; shift 2 ;;
      --burst) BURST=${2:?$usage}; shift 2 ;;
      *) die "$usage" ;;
    esac
  done
  [[ $K =~ ^[1-9][0-9]?$ ]] || die "K=$K: 1 to 99 hosts"
  [[ -z $RATE ]] || tc_rate_bytes "$RATE" >/dev/null
  [[ $SWITCHES =~ ^[1-9][0-9]?$ ]] && ((SWITCHES <= K)) || die "--switches $SWITCHES: 1 to K ($K)"
  ((SWITCHES > 1)) || [[ -z $UPLINK ]] || die "--uplink needs --switches 2 or more"
  UPLINK=${UPLINK:-$RATE}
  [[ -z $UPLINK ]] || tc_rate_bytes "$UPLINK" >/dev/null
  [[ -z $BURST ]] || { [[ $BURST =~ ^[0-9]{4,8}$ ]] && ((BURST >= 1514)); } ||
    die "--burst $BURST: bytes, 1514 (one Ethernet frame) or more"
  [[ -z $BURST || -n $RATE ]] || die "--burst needs a RATE"
  ID=${CLUSTER_ID:-$(printf '%x' $$)}
  [[ $ID =~ ^[a-z0-9]{1,6}$ ]] || die "CLUSTER_ID=$ID: 1 to 6 characters [a-z0-9]"
  state=${CLUSTER_STATE:-/tmp/topocoll-cluster-$ID}
  [[ ! -e $state/state ]] || die "cluster $ID is already up ($state): 'scripts/cluster.sh down' first"
  ((EUID == 0)) || skip "not root"
  local tool
  for tool in ip tc unshare flock; do command -v "$tool" >/dev/null || skip "$tool is missing"; done
  BRIDGE=tcb$ID

  mkdir -p "$state"
  # Choose the subnet and record it under the lock, so that two clusters
  # coming up at once take different ones.
  exec 9>>"$lockfile"
  flock 9
  if [[ -n ${CLUSTER_SUBNET:-} ]]; then
    PREFIX=$CLUSTER_SUBNET
    [[ $PREFIX =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "CLUSTER_SUBNET=$PREFIX: three octets, e.g. 10.213.7"
    subnet_taken "$PREFIX" && die "CLUSTER_SUBNET=$PREFIX is in use"
  else
    local n=$(( $(cksum <<<"$ID" | cut -d' ' -f1) % 250 )) t
    for ((t = 0; t < 250; t++)); do
      PREFIX=10.213.$(((n + t) % 250))
      subnet_taken "$PREFIX" || break
    done
    ((t < 250)) || die "no free 10.213.N.0/24"
  fi
  BRADDR=$PREFIX.254
  printf 'ID=%s\nK=%s\nRATE=%s\nPREFIX=%s\nBRIDGE=%s\nBRADDR=%s\nSWITCHES=%s\nUPLINK=%s\n' "$ID" "$K" "$RATE" \
    "$PREFIX" "$BRIDGE" "$BRADDR" "$SWITCHES" "$UPLINK" >"$state/state"
  : >"$state/hosts"
  local i name err
  for ((i = 1; i <= K; i++)); do
    name=tc$ID-h$i
    echo "$i $name $name $PREFIX.$i tc${ID}v$i" >>"$state/hosts"
  done
  mapfile -t host_lines <"$state/hosts"
  write_agent

  # From here on, a failure takes everything down again (and exits 1).
  trap 'rc=$?; ((rc == 0)) || { exec 9>&-; teardown >/dev/null 2>&1 || true; ((rc == SKIP)) || exit 1; }' EXIT
  # What needs privileges first: a failure there means "cannot here" (77).
  local what
  for what in bridge netns uts+ipc; do
    case $what in
      bridge) err=$(ip link add "$BRIDGE" type bridge 2>&1) ;;
      netns) err=$(ip netns add "$(host_field 1 2)" 2>&1) ;;
      uts+ipc) err=$(ip netns exec "$(host_field 1 2)" unshare -u -i true 2>&1) ;;
    esac || skip "$what: ${err//$'\n'/ }"
  done
  exec 9>&-   # the subnet is ours now (in the state file and on the bridge)

  [[ ! -w /proc/sys/net/ipv6/conf/$BRIDGE/disable_ipv6 ]] || echo 1 >"/proc/sys/net/ipv6/conf/$BRIDGE/disable_ipv6"
  ip addr add "$BRADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ((SWITCHES == 1)) || switches_up
  local ns veth peer
  for ((i = 1; i <= K; i++)); do
    name=$(host_field "$i" 1) ns=$(host_field "$i" 2) veth=$(host_field "$i" 4) peer=tc${ID}p$i
    ((i == 1)) || ip netns add "$ns"
    ip link add "$veth" type veth peer name "$peer"
    ip link set "$peer" netns "$ns"
    ip -n "$ns" link set "$peer" name eth0
    # no IPv6 (link-local chatter on the counters, addresses the MPIs might try)
    # shellcheck disable=SC2016
    ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do echo 1 >"$f"; done' 2>/dev/null || true
    [[ ! -w /proc/sys/net/ipv6/conf/$veth/disable_ipv6 ]] || echo 1 >"/proc/sys/net/ipv6/conf/$veth/disable_ipv6"
    ip -n "$ns" addr add "$PREFIX.$i/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$veth" master "$(switch_of "$i")"
    ip link set "$veth" up
    if [[ -n $RATE ]]; then
      tbf -n "$ns" eth0   # what the host sends
      tbf "$veth"         # what it receives
    fi
    # /etc/hosts inside the namespaces (ip netns exec mounts /etc/netns/NS/*)
    mkdir -p "/etc/netns/$ns"
    {
      printf '127.0.0.1\tlocalhost\n'
      local j
      for ((j = 1; j <= K; j++)); do printf '%s\t%s\n' "$PREFIX.$j" "$(host_field "$j" 1)"; done
      printf '%s\tlauncher-%s\n' "$BRADDR" "$ID"
    } >"/etc/netns/$ns/hosts"
  done
  # every host answers from the launcher's side (a refused TCP connection is an answer)
  for ((i = 1; i <= K; i++)); do
    reachable "$PREFIX.$i" || die "host $i ($PREFIX.$i) does not answer through $BRIDGE"
  done
  trap - EXIT
  local net=""
  ((SWITCHES == 1)) || net=", $SWITCHES switches, uplinks ${UPLINK:-unlimited}"
  echo "cluster $ID: $K host(s) $(host_field 1 1)..$(host_field "$K" 1) on $PREFIX.0/24" \
       "(launcher $BRADDR on $BRIDGE), link rate ${RATE:-unlimited}${RATE:+ (tbf, both directions${BURST:+, burst $BURST B})}$net; state $state"
  echo "CLUSTER_ID=$ID"
}

reachable() {   # reachable ADDR [from NS]: a TCP connection to port 9 is refused (not timed out)
  local out
  if [[ -n ${2:-} ]]; then
    out=$(ip netns exec "$2" timeout 3 bash -c "exec 3<>/dev/tcp/$1/9" 2>&1) && return 0
  else
    out=$(timeout 3 bash -c "exec 3<>/dev/tcp/$1/9" 2>&1) && return 0
  fi
  [[ $out == *"refused"* ]]
}

ns_exists() { ip netns list 2>/dev/null | grep -q "^$1\b"; }
ns_pids() { mapfile -t pids < <(ip netns pids "$1" 2>/dev/null || true); }

# Removes whatever of the loaded cluster exists; quiet about what does not.
teardown() {
  local i ns veth pids=() t
  for ((i = 1; i <= ${#host_lines[@]}; i++)); do
    ns=$(host_field "$i" 2)
    ns_exists "$ns" || continue
    ns_pids "$ns"
    ((${#pids[@]} == 0)) || kill -TERM "${pids[@]}" 2>/dev/null || true
  done
  for ((i = 1; i <= ${#host_lines[@]}; i++)); do
    ns=$(host_field "$i" 2) veth=$(host_field "$i" 4)
    if ns_exists "$ns"; then
      for ((t = 0; t < 20; t++)); do
        ns_pids "$ns"
        ((${#pids[@]})) || break
        ((t < 10)) || kill -KILL "${pids[@]}" 2>/dev/null || true
        sleep 0.1
      done
      ip netns delete "$ns" 2>/dev/null || true
    fi
    if ip link show "$veth" >/dev/null 2>&1; then ip link delete "$veth" 2>/dev/null || true; fi
    if ip link show "tc${ID}p$i" >/dev/null 2>&1; then ip link delete "tc${ID}p$i" 2>/dev/null || true; fi
    if [[ -d /etc/netns/$ns ]]; then rm -rf "/etc/netns/$ns"; fi
  done
  for ((i = 1; i <= ${SWITCHES:-1}; i++)); do   # (a flat network has none: nothing found)
    if ip link show "tc${ID}U$i" >/dev/null 2>&1; then ip link delete "tc${ID}U$i" 2>/dev/null || true; fi
    if ip link show "tcb${ID}S$i" >/dev/null 2>&1; then ip link delete "tcb${ID}S$i" 2>/dev/null || true; fi
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" 2>/dev/null || true; fi
  rm -rf "$state"
}

cmd_down() {
  (($# == 0)) || die "usage: down (with CLUSTER_ID or CLUSTER_STATE set)"
  load
  teardown
  local left
  left=$( (ip netns list; ip -o link show) 2>/dev/null | grep -E "\btc$ID-h[0-9]|\btcb$ID\b|\btc${ID}[vpUC][0-9]|\btcb${ID}S[0-9]" || true)
  [[ -z $left ]] || die "cluster $ID: left behind after down: $left"
  echo "cluster $ID: down"
}

cmd_reap() {
  load
  local i pids=()
  for ((i = 1; i <= K; i++)); do
    ns_pids "$(host_field "$i" 2)"
    ((${#pids[@]})) || continue
    echo "cluster: killing on $(host_field "$i" 1): ${pids[*]}" >&2
    kill -KILL "${pids[@]}" 2>/dev/null || true
  done
}

# ---- inspection -----------------------------------------------------------------
cmd_hosts() {
  load
  local i
  for ((i = 1; i <= K; i++)); do
    echo "$(host_field "$i" 1) $(host_field "$i" 2) $(host_field "$i" 3)"
  done
}

# counters: "NAME TX RX" per host, read inside each namespace
counters() {
  local i
  for ((i = 1; i <= K; i++)); do
    # shellcheck disable=SC2016
    echo "$(host_field "$i" 1) $(ip netns exec "$(host_field "$i" 2)" sh -c \
      'cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/rx_bytes' | paste -sd' ')"
  done
}

cmd_bytes() {
  load
  echo "# host tx_bytes rx_bytes (eth0 inside the host's namespace)"
  counters
}

cmd_exec() {
  load
  (($#)) || die "usage: exec HOST [--] CMD ARGS..."
  local i
  i=$(host_index "$1"); shift
  [[ ${1:-} != -- ]] || shift
  (($#)) || die "usage: exec HOST [--] CMD ARGS..."
  # shellcheck disable=SC2016
  exec ip netns exec "$(host_field "$i" 2)" unshare -u -i /bin/sh -c 'hostname "$1" && shift && exec "$@"' sh \
    "$(host_field "$i" 1)" "$@"
}

# ---- run ------------------------------------------------------------------------------
# UCX transports for MPICH: TCP between hosts, shared memory inside one.
# The hosts' IPC namespaces differ, so UCX's sysv/posix transports cannot
# reach another host; cma is left out because the hosts share the pid
# namespace (UCX would find it reachable between hosts).
ucx_tls() { echo "${CLUSTER_UCX_TLS:-tcp,self,sysv,posix}"; }

launch_note() {   # launch_note MPI [SHIM]
  if [[ $1 == openmpi ]]; then
    echo "mpi_yield_when_idle=1 (more ranks than cores), pml ob1, btl tcp,vader,self on $PREFIX.0/24"
  else
    echo "UCX_TLS=$(ucx_tls) UCX_NET_DEVICES=eth0${2:+, finalize fix preloaded}"
  fi
}

# parse_hosts SPEC: fills counts[] (ranks on host 1, 2, ...)
parse_hosts() {
  local spec=${1// /} k p
  counts=()
  if [[ $spec =~ ^([0-9]+)x([0-9]+)$ ]]; then
    k=${BASH_REMATCH[1]} p=${BASH_REMATCH[2]}
    for ((i = 0; i < k; i++)); do counts+=("$p"); done
  elif [[ $spec =~ ^[0-9]+(,[0-9]+)*$ ]]; then
    IFS=, read -r -a counts <<<"$spec"
  else
    die "--hosts $1: 'N,N,...' or 'KxP'"
  fi
  ((${#counts[@]} <= K)) || die "--hosts $1: ${#counts[@]} hosts, the cluster has $K"
}

cmd_run() {
  load
  local mpi=${CLUSTER_MPI:-openmpi} spec="" map=slot bytes=0 quiet=0 envs=()
  while (($#)); do
    case $1 in
      --env) [[ ${2:-} == [A-Za-z_]*=* ]] || die "--env ${2:-}: VAR=VALUE"; envs+=("$2"); shift 2 ;;
      --mpi) mpi=${2:?}; shift 2 ;;
      --hosts) spec=${2:?}; shift 2 ;;
      --map) map=${2:?}; shift 2 ;;
      --bytes) bytes=1; shift ;;
      --quiet) quiet=1; shift ;;
      --) shift; break ;;
      -h|--help) usage; exit 0 ;;
      -*) die "run: unknown option $1" ;;
      *) break ;;
    esac
  done
  (($#)) || die "run: no program"
  # The emulated hosts share this machine's cores, which no host can see:
  # under MPICH (busy-polling ranks) topocoll's waiters nap, unless told
  # otherwise; under Open MPI (yield when idle) they yield, as it does.
  local e nap=0
  [[ $mpi == mpich ]] && nap=1
  for e in "${envs[@]}"; do [[ $e == TOPOCOLL_NAP=* ]] && nap=0; done
  [[ -n ${TOPOCOLL_NAP:-} ]] && nap=0
  ((nap)) && envs=("TOPOCOLL_NAP=50" "${envs[@]}")
  [[ $mpi == openmpi || $mpi == mpich ]] || die "--mpi $mpi: openmpi or mpich"
  [[ $map == slot || $map == node ]] || die "--map $map: slot or node"
  local counts=() i n=0
  if [[ -n $spec ]]; then parse_hosts "$spec"; else for ((i = 0; i < K; i++)); do counts+=(1); done; fi
  local hostarg=() order=() left=() more=1
  for ((i = 0; i < ${#counts[@]}; i++)); do
    ((counts[i] > 0)) || continue
    hostarg+=("$(host_field $((i + 1)) 1):${counts[i]}")
    n=$((n + counts[i]))
  done
  ((n > 0)) || die "--hosts $spec: no ranks"
  # the host of each rank, in rank order
  left=("${counts[@]}")
  if [[ $map == slot ]]; then
    for ((i = 0; i < ${#counts[@]}; i++)); do
      local r
      for ((r = 0; r < counts[i]; r++)); do order+=("$((i + 1))"); done
    done
  else
    while ((more)); do
      more=0
      for ((i = 0; i < ${#left[@]}; i++)); do
        ((left[i] > 0)) || continue
        order+=("$((i + 1))"); left[i]=$((left[i] - 1)); more=1
      done
    done
  fi
  local hosts_csv
  hosts_csv=$(IFS=,; echo "${hostarg[*]}")

  local cmd=() e var val preload="" shim=""
  if [[ $mpi == mpich && ${CLUSTER_MPICH_FINALIZE_FIX:-1} != 0 ]]; then
    shim=$(cached_build mpich_ucx_finalize.so "$scripts/mpich_ucx_finalize.c" gcc -shared -fPIC -lucp -ldl) ||
      echo "cluster: WARNING: running MPICH without the finalize fix (ranks may hang in MPI_Finalize)" >&2
  fi
  if [[ $mpi == openmpi ]]; then
    cmd=(mpiexec.openmpi --allow-run-as-root --host "$hosts_csv" -np "$n" --map-by "$map"
         --mca plm_rsh_agent "$state/agent" --mca plm_rsh_no_tree_spawn 1
         --mca oob_tcp_if_include "$PREFIX.0/24" --mca pml ob1 --mca btl "tcp,vader,self"
         --mca btl_tcp_if_include "$PREFIX.0/24" --mca mpi_yield_when_idle 1)
    for e in "${envs[@]}"; do cmd+=(-x "$e"); done
    cmd+=("$@")
  else
    cmd=(mpiexec.hydra -launcher ssh -launcher-exec "$state/agent" -localhost "$BRADDR"
         -genv UCX_TLS "$(ucx_tls)" -genv UCX_NET_DEVICES eth0)
    for e in "${envs[@]}"; do
      var=${e%%=*} val=${e#*=}
      if [[ $var == LD_PRELOAD ]]; then preload=$val; else cmd+=(-genv "$var" "$val"); fi
    done
    [[ -z $shim ]] || preload=${preload:+$preload:}$shim
    [[ -z $preload ]] || cmd+=(-genv LD_PRELOAD "$preload")
    if [[ $map == slot ]]; then
      cmd+=(-hosts "$hosts_csv" -n "$n" "$@")
    else
      # Round-robin: hydra cycles over a host list one rank at a time with
      # -ppn 1 (it takes no per-host counts then, and a host named twice in
      # a list becomes two nodes), so the counts must be what cycling gives.
      local names=() j
      for ((i = 0; i < ${#counts[@]}; i++)); do ((counts[i] == 0)) || names+=("$(host_field $((i + 1)) 1)"); done
      local cyc=() hs idx=()
      for ((i = 0; i < ${#counts[@]}; i++)); do ((counts[i] == 0)) || idx+=("$((i + 1))"); done
      for ((j = 0; j < n; j++)); do cyc+=("${idx[j % ${#idx[@]}]}"); done
      [[ "${cyc[*]}" == "${order[*]}" ]] ||
        die "--mpi mpich --map node: hydra cannot place --hosts $spec round-robin (counts like 2,2,1 or KxP only)"
      hs=$(IFS=,; echo "${names[*]}")
      cmd+=(-hosts "$hs" -ppn 1 -n "$n" "$@")
    fi
  fi
  if ((!quiet)); then
    local names=()
    for i in "${order[@]}"; do names+=("$(host_field "$i" 1 | sed 's/.*-//')"); done
    echo "cluster $ID run: $mpi, $n ranks on $hosts_csv (map $map: ${names[*]}), link ${RATE:-unlimited};" \
         "$(launch_note "$mpi" "$shim")" >&2
  fi
  local before=() after=() rc=0
  ((!bytes)) || mapfile -t before < <(counters)
  "${cmd[@]}" || rc=$?
  if ((bytes)); then
    mapfile -t after < <(counters)
    local a b
    echo "bytes on the links during the job (host: sent, received):"
    for ((i = 0; i < K; i++)); do
      read -r -a a <<<"${after[i]}"
      read -r -a b <<<"${before[i]}"
      echo "  ${a[0]}: tx $((a[1] - b[1])) rx $((a[2] - b[2]))"
    done
  fi
  return "$rc"
}

# ---- calib -------------------------------------------------------------------------
# cached_build NAME SRC COMPILER [ARGS...]: $cache/NAME built from SRC unless
# it is newer; prints its path (empty and a warning on stderr if it fails)
cached_build() {
  local name=$1 src=$2 cc=$3 tmp
  shift 3
  local cache=${CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emucluster}
  local out=$cache/$name
  mkdir -p "$cache"
  if [[ ! -x $out || $src -nt $out ]]; then
    command -v "$cc" >/dev/null || { echo "cluster: $cc not found" >&2; return 1; }
    tmp=$(mktemp "$out.XXXXXX")
    if ! "$cc" -O2 -o "$tmp" "$src" "$@" >&2; then
      rm -f "$tmp"
      echo "cluster: cannot compile $src" >&2
      return 1
    fi
    chmod 755 "$tmp"
    mv -f "$tmp" "$out"
  fi
  echo "$out"
}

cmd_calib() {
  load
  local mpi=${CLUSTER_MPI:-openmpi} iters=1000 reps=10
  while (($#)); do
    case $1 in
      --mpi) mpi=${2:?}; shift 2 ;;
      --iters) iters=${2:?}; shift 2 ;;
      --reps) reps=${2:?}; shift 2 ;;
      *) die "calib: unknown argument $1" ;;
    esac
  done
  [[ $mpi == openmpi || $mpi == mpich ]] || die "--mpi $mpi: openmpi or mpich"
  ((K >= 2)) || die "calib needs 2 hosts (the cluster has $K)"
  local bin
  bin=$(cached_build "pingpong-$mpi" "$scripts/pingpong.c" "mpicc.$mpi") || exit 1
  echo "calib: $mpi ping-pong $(host_field 1 1) <-> $(host_field 2 1), link rate" \
       "${RATE:-unlimited}${RATE:+ (tbf on both ends of each link)}; $(launch_note "$mpi")"
  cmd_run --mpi "$mpi" --hosts 1,1 --bytes --quiet -- "$bin" "$iters" "$reps"
}

# ---- job ---------------------------------------------------------------------------
cmd_job() {
  (($# >= 2)) || die "usage: job K [RATE] COMMAND ARGS..."
  local k=$1 rate=""
  shift
  case $1 in run|calib|exec|bytes|hosts) ;; *) rate=$1; shift ;; esac
  (($#)) || die "usage: job K [RATE] COMMAND ARGS..."
  case $1 in run|calib|exec|bytes|hosts) ;; *) die "job: COMMAND is run, calib, exec, bytes or hosts" ;; esac
  export CLUSTER_ID=${CLUSTER_ID:-$(printf '%x' $$)}
  export CLUSTER_STATE=${CLUSTER_STATE:-/tmp/topocoll-cluster-$CLUSTER_ID}
  local rc=0
  "$self" up "$k" ${rate:+"$rate"} || return $?
  trap '"$self" down >/dev/null 2>&1 || echo "cluster: down failed" >&2' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  "$self" "$@" || rc=$?
  return "$rc"
}

(($#)) || { usage >&2; exit 1; }
command=$1; shift
case $command in
  -h|--help|help) usage ;;
  up|down|run|calib|bytes|exec|hosts|reap|job) "cmd_$command" "$@" ;;
  *) usage >&2; exit 1 ;;
esac
