# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# A real ssh server and a real two-node Slurm cluster on the two soft-RoCE
# guests of tests/twonode/launchers.sh.  Sourced; nothing here touches the
# host's own configuration: the host makes the keys and the configuration
# files for one run in a folder of its own (cluster_make), and each guest
# copies them to its tmpfs /run (cluster_install) and points every daemon
# and client at them (SLURM_CONF, ssh -F, munged --socket ...).
#
# Node 1 (198.18.1.1, the server guest): sshd, munged, slurmctld, slurmd.
# Node 2 (198.18.1.2, the client guest): munged, slurmd, and the clients:
# ssh, salloc, srun, squeue.

cluster_node1=cqnode1
cluster_node2=cqnode2
cluster_addr1=198.18.1.1
cluster_addr2=198.18.1.2
# Where a guest keeps the run's copy (tmpfs: /run is mode 755, so sshd and
# munged accept the folders' modes, which they would not under /tmp).
cluster_run=/run/cqperf-cluster

# cluster_make DIR CPUS: on the host, the run's keys and configuration in
# DIR: an ssh host key and a client key made for this run, the known_hosts
# and ssh_config that name them, sshd_config, a munge key, slurm.conf.
cluster_make() {
	local dir=$1 cpus=$2 r=$cluster_run
	mkdir -p "$dir" || return 1
	ssh-keygen -q -t ed25519 -N '' -C cqperf-host -f "$dir/host_key" &&
		ssh-keygen -q -t ed25519 -N '' -C cqperf-client -f "$dir/id" ||
		return 1
	cp "$dir/id.pub" "$dir/authorized_keys"
	echo "$cluster_addr1 $(cut -d' ' -f1-2 "$dir/host_key.pub")" >"$dir/known_hosts"
	cat >"$dir/ssh_config" <<-EOF
		Host $cluster_addr1
		    User root
		    IdentityFile $r/id
		    IdentitiesOnly yes
		    UserKnownHostsFile $r/known_hosts
		    StrictHostKeyChecking yes
		    BatchMode yes
		    ConnectTimeout 20
	EOF
	# Only the guests' private address; no PAM (nothing of the host's
	# login configuration), keys only.
	cat >"$dir/sshd_config" <<-EOF
		ListenAddress $cluster_addr1
		Port 22
		HostKey $r/host_key
		AuthorizedKeysFile $r/authorized_keys
		PidFile $r/sshd.pid
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		PrintMotd no
		AcceptEnv none
	EOF
	head -c 1024 /dev/urandom >"$dir/munge.key" || return 1
	cat >"$dir/slurm.conf" <<-EOF
		ClusterName=cqperf
		SlurmctldHost=$cluster_node1($cluster_addr1)
		SlurmUser=root
		SlurmdUser=root
		AuthType=auth/munge
		CredType=cred/munge
		AuthInfo=socket=$r/munge.socket
		StateSaveLocation=$r/slurmctld
		SlurmdSpoolDir=$r/slurmd
		SlurmctldPidFile=$r/slurmctld.pid
		SlurmdPidFile=$r/slurmd.pid
		SlurmctldLogFile=$r/slurmctld.log
		SlurmdLogFile=$r/slurmd.log
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		JobCompType=jobcomp/none
		MpiDefault=none
		SelectType=select/linear
		SchedulerType=sched/builtin
		ReturnToService=2
		SlurmdParameters=config_overrides
		NodeName=$cluster_node1 NodeAddr=$cluster_addr1 CPUs=$cpus State=UNKNOWN
		NodeName=$cluster_node2 NodeAddr=$cluster_addr2 CPUs=$cpus State=UNKNOWN
		PartitionName=cqperf Nodes=$cluster_node1,$cluster_node2 Default=YES MaxTime=30 State=UP
	EOF
	# slurmd wants a cgroup plugin even with proctrack/linuxproc: v2 on
	# the guest's own cgroup2 mount, without systemd.
	printf '%s\n' CgroupPlugin=cgroup/v2 IgnoreSystemd=yes >"$dir/cgroup.conf"
	chmod 600 "$dir"/*
}

# cluster_install DIR NAME: in a guest, this node's copy of DIR's files
# (modes the daemons accept) and its host name; exports SLURM_CONF.
cluster_install() {
	local dir=$1
	mkdir -p "$cluster_run/slurmctld" "$cluster_run/slurmd" &&
		chmod 700 "$cluster_run" || return 1
	cp "$dir"/* "$cluster_run/" && chmod 600 "$cluster_run"/* ||
		return 1
	chmod 644 "$cluster_run/slurm.conf" "$cluster_run/cgroup.conf"
	hostname "$2" || return 1
	# (systemd would have made system.slice: slurmd's scope goes there)
	mountpoint -q /sys/fs/cgroup ||
		mount -t cgroup2 cgroup2 /sys/fs/cgroup || return 1
	mkdir -p /sys/fs/cgroup/system.slice
	export SLURM_CONF=$cluster_run/slurm.conf
}

# cluster_sshd: on node 1, sshd on the private address (it forks once it
# listens; its privilege separation needs /run/sshd).
cluster_sshd() {
	mkdir -p /run/sshd && chmod 755 /run/sshd || return 1
	/usr/sbin/sshd -f "$cluster_run/sshd_config" -E "$cluster_run/sshd.log"
}

# cluster_munged ADDR: munged with the run's key and socket (ADDR: this
# node's, the origin its credentials carry; the name does not resolve).
cluster_munged() {
	local r=$cluster_run
	/usr/sbin/munged --force --origin="$1" --key-file="$r/munge.key" \
		--socket="$r/munge.socket" --pid-file="$r/munged.pid" \
		--log-file="$r/munged.log" --seed-file="$r/munged.seed"
}

# cluster_slurmd NAME: this node's slurmd (it forks).
cluster_slurmd() {
	/usr/sbin/slurmd -f "$SLURM_CONF" -N "$1"
}

# cluster_slurmctld: the controller, on node 1 (it forks).
cluster_slurmctld() {
	/usr/sbin/slurmctld -f "$SLURM_CONF" -c -i
}

# cluster_wait_idle SECONDS: until both nodes are idle in sinfo.
cluster_wait_idle() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		[ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -ge 2 ] &&
			return 0
		sleep 0.5
	done
	return 1
}

# cluster_stop: every daemon this node started, by its pid file.
cluster_stop() {
	local f
	for f in slurmd slurmctld munged sshd; do
		[ -s "$cluster_run/$f.pid" ] &&
			kill "$(cat "$cluster_run/$f.pid")" 2>/dev/null
	done
	return 0
}
