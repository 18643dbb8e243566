// Package inventory discovers a host's RDMA devices from sysfs, chooses the
// GID each port tests with, and runs the host preflight checks behind
// `rdmamesh doctor` and the inventory a worker publishes.
//
// Pipeline: Scan reads an fs.FS whose root stands for "/" into a Host;
// Host.LookupNeighbors optionally adds each Ethernet port's switch
// neighbour (LLDP, package lldp); Host.Select applies a GIDPolicy to one
// port; Host.Ports and Host.Checks give the published probe shapes;
// Diagnose builds doctor's Report.
//
// Everything is read through the fs.FS so a captured tree gives the same
// answer on any machine. What sysfs does not hold comes from Options:
//
//   - netdev addresses: Options.Addrs. SystemOptions asks the kernel; for a
//     captured tree FixtureOptions reads the file AddrsFile ("addrs") at the
//     tree's root, one netdev per line followed by its CIDR addresses:
//
//     # netdev  addresses
//     net1 192.168.1.201/24 fe80::783c:55ff:fe10:2c9/64
//
//   - RLIMIT_MEMLOCK: Options.MemlockLimit, else proc/self/limits.
//
//   - CAP_IPC_LOCK: always proc/self/status (CapEff) under the root.
//
//   - rdma netns mode: Options.NetnsMode (netlink), else
//     sys/module/ib_core/parameters/netns_mode.
//
//   - device-node access: Options.Access, else existence only.
//
// Neighbours are not in sysfs either, and are not part of Scan: a
// NeighborLookup answers for the ports' netdevs. NeighborCollector asks a
// running lldpd or reads LLDP frames (bounded by NeighborOptions.Wait for
// doctor; without a wait for a worker, whose listeners keep running in the
// background until the collector is closed); FixtureNeighbors answers from
// a captured tree's LLDPFile ("lldpcli.json", lldpcli's json0 output).
// InfiniBand ports answer IBNeighbor: their peers are the subnet manager's.
//
// Vocabulary: a rail is a port's position in natural device order, then
// port number (mlx5_2 before mlx5_10); rail i of one node tests rail i of
// another. A GID entry is "usable here" when its netdev exists in this
// network namespace and carries the GID's address; the rest belong to
// other namespaces (a container in rdma shared mode sees them all).
package inventory
