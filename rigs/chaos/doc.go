// Package chaos is the multi-process fault test behind `make chaos`: three
// `rdmamesh coordinator` processes and six or more `rdmamesh worker --fabric
// sim` processes on loopback, and four scenarios that break them the way
// production does:
//
//	(a) leader  kill -9 the raft leader mid-sweep, seeded trials: failover
//	            time, the sweep completes on the new leader, no cell lost or
//	            counted twice
//	(b) worker  kill -9 a worker mid-sweep: its cells are peer-lost, the rest
//	            ok, and the restarted worker is in the next sweep
//	(c) split   cut one coordinator's raft links (a userspace partition, see
//	            Net): it commits nothing, the majority keeps working, and it
//	            catches up after the heal
//	(d) restart kill every coordinator and start them on the same data
//	            dirs: history is intact and a new sweep runs
//
// Every scenario prints what it did and its figures, and Run returns 1 on
// any violation. The processes are real: the only thing simulated is the
// RDMA fabric.
//
// The raft partition is done in userspace so the test needs neither root
// nor network namespaces: every coordinator advertises a raft address owned
// by a proxy in this process (Net), which learns who dialled it from the
// first raft RPC header and refuses or severs links across a cut.
//
// It is a test rig of ~3.8k lines (processes, the raft proxy, the ledger
// that counts every cell, the at-scale variant): one rig with one report,
// never imported by product code (internal/archtest).
package chaos
