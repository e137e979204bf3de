#!/usr/bin/env bash
# The first process of a test node's network and mount namespaces, which local/kube/node-cluster.ts
# starts as `unshare --net --mount --propagation private node-namespace.sh <dir> <address> <service CIDR>`. It gives
# the node its address, keeps what the node's programs write to /var and /run (the kubelet's pod logs,
# CNI's cache, containerd's shim sockets, iptables' lock) in <dir>'s overlays, and puts files of the
# node's own over the kernel settings the kubelet sets, so that the host is left as it was; then it
# holds the namespaces open. They end, with their mounts and interfaces, when their last process does.
set -euo pipefail
dir="$1"
address="$2"
service_cidr="$3"

ip link set lo up
# The kubelet refuses a loopback address as the node's; this one is on lo too (this kernel has no
# dummy interfaces), reachable from the pods through their bridge's gateway.
ip address add "$address/32" dev lo
# The namespace has no default route: without one for the Services, a connection from the node itself
# (the load balancers' forwards) to a cluster IP fails its route lookup before kube-proxy's DNAT.
ip route add "$service_cidr" dev lo src "$address"

for path in /var /run; do
  name="$(basename "$path")"
  mkdir -p "$dir/$name.upper" "$dir/$name.work"
  mount -t overlay overlay -o "lowerdir=$path,upperdir=$dir/$name.upper,workdir=$dir/$name.work" "$path"
done

# The kubelet's kernel tunables (pkg/kubelet/cm setupKernelTunables): it reads the host's values
# from these copies and writes its own into them.
mkdir -p "$dir/sysctl"
for key in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  file="$dir/sysctl/${key//\//.}"
  cat "/proc/sys/$key" > "$file"
  mount --bind "$file" "/proc/sys/$key"
done

touch "$dir/ready"
exec sleep infinity
