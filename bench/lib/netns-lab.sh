#!/usr/bin/env bash
# The namespace lab of runs across hosts: a coordinator namespace holding a
# bridge at SUBNET.254, and three host namespaces standing in for machines
# (a server at SUBNET.1, generators at SUBNET.2 and SUBNET.3), each with
# its own sshd on port 2222 that trusts one client key made for the lab.
# Every file (keys, known_hosts, ssh_config, sshd configs and logs) is in
# DIR; `ssh -F DIR/ssh_config root@SUBNET.1` reaches the server host.
#
# Sourced (bench/hosts-netns.sh):
#   lab_up DIR TAG SUBNET   makes the namespaces ${TAG}c, ${TAG}s, ${TAG}g1,
#                           ${TAG}g2 and starts the sshd listeners; sets
#                           lab_coordinator, lab_names, lab_addresses.
#                           TAG is letters, then the pid of the process the
#                           lab belongs to, then optionally n<NUMBER>: a lab
#                           first removes the namespaces of its kind (same
#                           letters) whose process has ended, such as those
#                           of a run killed with its lab script
#   lab_down                kills every process in the namespaces, waits for
#                           the listeners and deletes the namespaces
# Run (crates/corobench/tests/hosts_netns.rs):
#   bench/lib/netns-lab.sh DIR TAG SUBNET
#       makes the lab, writes the listeners' pids to DIR/listeners, prints
#       `ready`, keeps the lab while its stdin stays open, then takes it down.
# Both return or exit 2 when this machine cannot host the lab (not root, no
# sshd, no network namespaces) and 1 when the lab fails.

LAB_SSHD=/usr/sbin/sshd
LAB_SSH_PORT=2222

lab_up() {
    lab_dir=$1
    local tag=$2 subnet=$3
    lab_subnet=$subnet
    lab_coordinator=${tag}c
    lab_names=("${tag}s" "${tag}g1" "${tag}g2")
    lab_addresses=("$subnet.1" "$subnet.2" "$subnet.3")
    lab_sshd_pids=()
    [ "$(id -u)" -eq 0 ] || { echo "network namespaces need root" >&2; return 2; }
    [ -x "$LAB_SSHD" ] || {
        echo "$LAB_SSHD is missing (Debian: apt-get install openssh-server; \`make test\` does)" >&2
        return 2
    }
    lab_sweep "$tag"
    lab_network || { echo "cannot create network namespaces here; run as root" >&2; return 2; }
    lab_sshd
}

# Removes the namespaces of ended labs of TAG's kind: a lab's script takes
# its namespaces down when it ends, unless it was killed outright.
lab_sweep() {
    local letters=${1%%[0-9]*} ns pid
    for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
        [[ $ns =~ ^${letters}([0-9]+)(n[0-9]+)?(c|s|g1|g2)$ ]] || continue
        pid=${BASH_REMATCH[1]}
        kill -0 "$pid" 2>/dev/null && continue
        for pid in $(ip netns pids "$ns"); do kill -KILL "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null &&
            echo "removed namespace $ns, left by a lab whose process ${BASH_REMATCH[1]} has ended" >&2
    done
}

# A bridge in the coordinator's namespace; one veth pair to each host.
lab_network() {
    local i c=$lab_coordinator
    ip netns add "$c" || return 1
    ip -n "$c" link set lo up &&
        ip -n "$c" link add br0 type bridge &&
        ip -n "$c" addr add "$lab_subnet.254/24" dev br0 &&
        ip -n "$c" link set br0 up || return 1
    for i in 0 1 2; do
        ip netns add "${lab_names[$i]}" &&
            ip -n "$c" link add "up$i" type veth peer name "eth$i" netns "${lab_names[$i]}" &&
            ip -n "$c" link set "up$i" master br0 up &&
            ip -n "${lab_names[$i]}" addr add "${lab_addresses[$i]}/24" dev "eth$i" &&
            ip -n "${lab_names[$i]}" link set "eth$i" up &&
            ip -n "${lab_names[$i]}" link set lo up || return 1
    done
}

# One sshd per host namespace, and a client config that trusts only them.
lab_sshd() {
    local i addr ns d=$lab_dir
    ssh-keygen -q -t ed25519 -N "" -f "$d/host_key" || return 1
    ssh-keygen -q -t ed25519 -N "" -f "$d/client_key" || return 1
    cp "$d/client_key.pub" "$d/authorized_keys"
    : > "$d/known_hosts"
    for addr in "${lab_addresses[@]}"; do
        echo "[$addr]:$LAB_SSH_PORT $(cat "$d/host_key.pub")" >> "$d/known_hosts"
    done
    printf 'Host %s.*\n  Port %s\n  User root\n  IdentityFile %s/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile %s/known_hosts\n  StrictHostKeyChecking yes\n' \
        "$lab_subnet" "$LAB_SSH_PORT" "$d" "$d" > "$d/ssh_config"
    # sshd refuses to start without its privilege separation folder, which
    # the package's service would otherwise create.
    mkdir -p /run/sshd
    for i in 0 1 2; do
        ns=${lab_names[$i]}
        printf 'ListenAddress %s\nPort %s\nHostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nPidFile none\nSubsystem sftp internal-sftp\nSetEnv PATH=%s\n' \
            "${lab_addresses[$i]}" "$LAB_SSH_PORT" "$d" "$d" "$PATH" > "$d/sshd-$ns.conf"
        ip netns exec "$ns" "$LAB_SSHD" -D -e -f "$d/sshd-$ns.conf" \
            < /dev/null > /dev/null 2> "$d/sshd-$ns.log" &
        lab_sshd_pids+=($!)
    done
    for addr in "${lab_addresses[@]}"; do
        for _ in $(seq 100); do
            ip netns exec "$lab_coordinator" ssh -F "$d/ssh_config" -o BatchMode=yes "$addr" true \
                2>/dev/null && continue 2
            sleep 0.1
        done
        echo "sshd on $addr did not answer; see $d/sshd-*.log" >&2
        return 1
    done
}

lab_down() {
    local ns pid
    # The shell reports each killed job on stderr: nothing worth saying here.
    {
        for ns in "$lab_coordinator" "${lab_names[@]}"; do
            for pid in $(ip netns pids "$ns"); do kill -KILL "$pid" || true; done
        done
        for pid in "${lab_sshd_pids[@]}"; do wait "$pid" || true; done
    } 2>/dev/null
    for ns in "$lab_coordinator" "${lab_names[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    [ $# -eq 3 ] || { echo "usage: $0 DIR TAG SUBNET" >&2; exit 2; }
    trap lab_down EXIT
    trap 'exit 143' TERM INT
    lab_up "$@" || exit $?
    printf '%s\n' "${lab_sshd_pids[@]}" > "$1/listeners"
    echo ready
    # The lab lives as long as the caller keeps this pipe open.
    while read -r _; do :; done
fi
