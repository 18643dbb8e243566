package inventory

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sysfs trees under testdata/<name>/ are generated from the specs below
// (go test -run TestFixtureTrees -gen) and committed, so `rdmamesh doctor
// --sysfs-root testdata/<name>` works on them directly. Edit the spec, not
// the tree: TestFixtureTrees fails when they drift apart.
var gen = flag.Bool("gen", false, "rewrite the testdata sysfs trees from the fixture specs")

type fxGID struct {
	idx      int
	gid, typ string
	ndev     string // "" writes no ndevs file (IB, or a netdev the kernel lost)
}

type fxPort struct {
	num                      int
	state, phys, layer, rate string
	lid, smlid               int
	gids                     []fxGID
	zeroSlots                int               // empty GID slots written after the used ones
	roceMode                 string            // configfs default_roce_mode; "" = not configured
	counters                 map[string]string // "counters/x" or "hw_counters/x" → value
}

type fxDev struct {
	name, hcaType, fw, guid, board, pci string
	numa                                int // written only when pci != ""
	uverbs                              int // -1: no infiniband_verbs entry
	ports                               []fxPort
}

type fxNetdev struct {
	name, oper, mac string
	mtu             int
	addrs           []string
}

type fixture struct {
	name     string
	devs     []fxDev
	nets     []fxNetdev
	memlock  string // soft and hard, as proc/self/limits prints them
	capEff   string
	uid      int
	netns    string // ib_core netns_mode parameter: Y | N
	modules  []string
	devNodes []string // files under dev/infiniband; nil: no such directory
	route    string   // netdev of the IPv4 default route (proc/net/route); "": no file
}

const (
	capsRoot   = "000001ffffffffff"
	capsDocker = "00000000a80425fb"
	capsNone   = "0000000000000000"
)

var rdmaMods = []string{"ib_core", "ib_uverbs", "rdma_ucm", "rdma_cm", "mlx5_core", "mlx5_ib"}

func roce(idx int, gid, typ, ndev string) fxGID {
	return fxGID{idx: idx, gid: gid, typ: typ, ndev: ndev}
}

func ibGID(gid string) []fxGID { return []fxGID{{idx: 0, gid: gid, typ: TypeRoCEv1}} }

func activeEth(rate string, gids ...fxGID) fxPort {
	return fxPort{num: 1, state: "4: ACTIVE", phys: "5: LinkUp", layer: LayerEth, rate: rate, gids: gids, zeroSlots: 2}
}

func fixtures() []fixture {
	return []fixture{
		{
			// Seed 001 (ibv_devinfo -v): f1's IPv4 RoCE v2 GID sits at index
			// 2 behind two link-local entries; f0 has only its link-local GID.
			name: "cx5-roce-v4-index2",
			devs: []fxDev{
				{name: "rocep101s0f0", hcaType: "MT4119", fw: "16.35.2000", guid: "6a91:d0ff:fe6e:ef18",
					board: "MT_0000000080", pci: "0000:65:00.0", numa: 0, uverbs: 0,
					ports: []fxPort{activeEth("100 Gb/sec (4X EDR)",
						roce(0, "fe80::6a91:d0ff:fe6e:ef18", TypeRoCEv2, "enp101s0f0np0"))}},
				{name: "rocep101s0f1", hcaType: "MT4119", fw: "16.35.2000", guid: "6a91:d0ff:fe6e:ef19",
					board: "MT_0000000080", pci: "0000:65:00.1", numa: 0, uverbs: 1,
					ports: []fxPort{withMode(activeEth("100 Gb/sec (4X EDR)",
						roce(0, "fe80::6a91:d0ff:fe6e:ef19", TypeRoCEv2, "enp101s0f1np1"),
						roce(1, "fe80::818d:77e7:ab1b:6998", TypeRoCEv2, "enp101s0f1np1"),
						roce(2, "::ffff:192.168.99.100", TypeRoCEv2, "enp101s0f1np1")), TypeRoCEv2)}},
			},
			nets: []fxNetdev{
				{name: "enp101s0f0np0", oper: "up", mac: "68:91:d0:6e:ef:18", mtu: 1500,
					addrs: []string{"fe80::6a91:d0ff:fe6e:ef18/64"}},
				{name: "enp101s0f1np1", oper: "up", mac: "68:91:d0:6e:ef:19", mtu: 1500,
					addrs: []string{"192.168.99.100/24", "fe80::818d:77e7:ab1b:6998/64"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y", modules: rdmaMods,
			devNodes: []string{"rdma_cm", "uverbs0", "uverbs1"},
		},
		{
			// Seed 001's show_gids: v1 and v2 entries for every address of
			// p1p1, plus a VLAN; an unprivileged user with systemd's 8 MiB
			// memlock, and rdma_cm's default switched to v1 (seed 003).
			name: "show-gids-v1-v2",
			devs: []fxDev{{name: "mlx5_4", hcaType: "MT4119", fw: "16.32.1010", guid: "ec0d:9a03:002f:c21a",
				board: "MT_0000000008", pci: "0000:86:00.0", numa: 1, uverbs: 4,
				ports: []fxPort{withMode(activeEth("100 Gb/sec (4X EDR)",
					roce(0, "fe80::ee0d:9aff:fe2f:c21a", TypeRoCEv1, "p1p1"),
					roce(1, "fe80::ee0d:9aff:fe2f:c21a", TypeRoCEv2, "p1p1"),
					roce(2, "::ffff:10.10.4.14", TypeRoCEv1, "p1p1"),
					roce(3, "::ffff:10.10.4.14", TypeRoCEv2, "p1p1"),
					roce(4, "2001:db8:4::14", TypeRoCEv1, "p1p1"),
					roce(5, "2001:db8:4::14", TypeRoCEv2, "p1p1"),
					roce(6, "::ffff:10.100.4.14", TypeRoCEv1, "p1p1.100"),
					roce(7, "::ffff:10.100.4.14", TypeRoCEv2, "p1p1.100")), TypeRoCEv1)}}},
			nets: []fxNetdev{
				{name: "p1p1", oper: "up", mac: "ec:0d:9a:2f:c2:1a", mtu: 9000,
					addrs: []string{"10.10.4.14/16", "2001:db8:4::14/64", "fe80::ee0d:9aff:fe2f:c21a/64"}},
				{name: "p1p1.100", oper: "up", mac: "ec:0d:9a:2f:c2:1a", mtu: 9000, addrs: []string{"10.100.4.14/16"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "8388608 8388608", capEff: capsNone, uid: 1000, netns: "Y",
			modules:  []string{"ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib"},
			devNodes: []string{"uverbs4"},
		},
		{
			// Seed 003 (ibv_devinfo/ibstat mlx4_1): ConnectX-3 VPI, port 1
			// InfiniBand with an SM at LID 2, port 2 Ethernet with RoCE v1
			// only (MT4099 predates v2); IPs from seed 004.
			name: "mlx4-vpi-ib-eth",
			devs: []fxDev{{name: "mlx4_1", hcaType: "MT4099", fw: "2.30.8000", guid: "f452:1403:007b:cba0",
				board: "MT_1090120019", pci: "0000:81:00.0", numa: 1, uverbs: 0,
				ports: []fxPort{
					{num: 1, state: "4: ACTIVE", phys: "5: LinkUp", layer: LayerIB, rate: "56 Gb/sec (4X FDR)",
						lid: 2, smlid: 2, gids: ibGID("fe80::f452:1403:7b:cba1"), zeroSlots: 2},
					{num: 2, state: "4: ACTIVE", phys: "5: LinkUp", layer: LayerEth, rate: "40 Gb/sec (4X QDR)",
						gids: []fxGID{
							roce(0, "fe80::f652:14ff:fe7b:cba2", TypeRoCEv1, "enp129s0d1"),
							roce(1, "::ffff:192.168.21.1", TypeRoCEv1, "enp129s0d1"),
						}, zeroSlots: 2, roceMode: TypeRoCEv1},
				}}},
			nets: []fxNetdev{
				{name: "enp129s0d1", oper: "up", mac: "f4:52:14:7b:cb:a2", mtu: 9000, addrs: []string{"192.168.21.1/24"}},
				{name: "ib0", oper: "up", mac: "80:00:02:08:fe:80:00:00:00:00:00:00:f4:52:14:03:00:7b:cb:a1", mtu: 2044,
					addrs: []string{"192.0.2.1/24"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y",
			modules:  []string{"ib_core", "ib_uverbs", "rdma_ucm", "ib_ipoib", "mlx4_core", "mlx4_ib", "mlx4_en"},
			devNodes: []string{"rdma_cm", "uverbs0"},
		},
		{
			// Seeds 000 and 002: a pod in rdma shared mode sees both HCAs and
			// every GID, but owns only net1 (a macvlan on ens785f0 holding
			// 192.168.1.201) and the device node of mlx5_0. Index 4-5 are
			// another pod's net1.
			name: "container-no-netdev",
			devs: []fxDev{
				{name: "mlx5_0", hcaType: "MT4119", fw: "16.35.2000", guid: "e41d:2d03:00f2:a488",
					board: "MT_0000000080", pci: "0000:af:00.0", numa: 1, uverbs: 0,
					ports: []fxPort{activeEth("100 Gb/sec (4X EDR)",
						roce(0, "fe80::e61d:2dff:fef2:a488", TypeRoCEv1, "ens785f0"),
						roce(1, "fe80::e61d:2dff:fef2:a488", TypeRoCEv2, "ens785f0"),
						roce(2, "::ffff:192.168.1.10", TypeRoCEv1, "ens785f0"),
						roce(3, "::ffff:192.168.1.10", TypeRoCEv2, "ens785f0"),
						roce(4, "::ffff:192.168.1.202", TypeRoCEv1, "net1"),
						roce(5, "::ffff:192.168.1.202", TypeRoCEv2, "net1"),
						roce(6, "::ffff:192.168.1.201", TypeRoCEv1, "net1"),
						roce(7, "::ffff:192.168.1.201", TypeRoCEv2, "net1"))}},
				{name: "mlx5_1", hcaType: "MT4119", fw: "16.35.2000", guid: "e41d:2d03:00f2:a489",
					board: "MT_0000000080", pci: "0000:af:00.1", numa: 1, uverbs: 1,
					ports: []fxPort{activeEth("100 Gb/sec (4X EDR)",
						roce(0, "fe80::e61d:2dff:fef2:a489", TypeRoCEv1, "ens785f1"),
						roce(1, "fe80::e61d:2dff:fef2:a489", TypeRoCEv2, "ens785f1"),
						roce(2, "::ffff:192.168.2.10", TypeRoCEv1, ""),
						roce(3, "::ffff:192.168.2.10", TypeRoCEv2, ""))}},
			},
			nets: []fxNetdev{
				{name: "eth0", oper: "up", mac: "ee:ee:ee:ee:ee:ee", mtu: 1440, addrs: []string{"10.244.1.7/32"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
				{name: "net1", oper: "up", mac: "7a:3c:55:10:02:c9", mtu: 1500, addrs: []string{"192.168.1.201/24"}},
			},
			memlock: "65536 65536", capEff: "00000000a80465fb", netns: "Y", modules: rdmaMods,
			devNodes: []string{"rdma_cm", "uverbs0"},
		},
		{
			// Seed 001 PORT_DOWN: a ConnectX-5 whose P1 is InfiniBand and P2
			// Ethernet, cabled to peers of the other kind: both DOWN/Polling.
			name: "link-layer-mismatch-down",
			devs: []fxDev{
				{name: "mlx5_0", hcaType: "MT4119", fw: "16.35.2000", guid: "0c42:a103:00ab:cd10",
					board: "MT_0000000080", pci: "0000:3b:00.0", numa: 0, uverbs: 0,
					ports: []fxPort{{num: 1, state: "1: DOWN", phys: "2: Polling", layer: LayerIB,
						rate: "10 Gb/sec (4X SDR)", gids: ibGID("fe80::c42:a103:ab:cd10"), zeroSlots: 2}}},
				{name: "mlx5_1", hcaType: "MT4119", fw: "16.35.2000", guid: "0c42:a103:00ab:cd11",
					board: "MT_0000000080", pci: "0000:3b:00.1", numa: 0, uverbs: 1,
					ports: []fxPort{{num: 1, state: "1: DOWN", phys: "2: Polling", layer: LayerEth,
						rate: "40 Gb/sec (4X QDR)", zeroSlots: 2, gids: []fxGID{
							roce(0, "fe80::e42:a1ff:feab:cd11", TypeRoCEv1, "enp59s0f1np1"),
							roce(1, "fe80::e42:a1ff:feab:cd11", TypeRoCEv2, "enp59s0f1np1"),
							roce(2, "::ffff:10.0.1.2", TypeRoCEv1, "enp59s0f1np1"),
							roce(3, "::ffff:10.0.1.2", TypeRoCEv2, "enp59s0f1np1"),
						}}}},
			},
			nets: []fxNetdev{
				{name: "enp59s0f1np1", oper: "down", mac: "0c:42:a1:ab:cd:11", mtu: 9000, addrs: []string{"10.0.1.2/24"}},
				{name: "ibp59s0f0", oper: "down", mac: "00:00:10:29:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:ab:cd:10", mtu: 4092},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y", modules: append(rdmaMods, "ib_ipoib"),
			devNodes: []string{"rdma_cm", "uverbs0", "uverbs1"},
		},
		{
			// Two ConnectX-6 HDR ports whose links trained but no subnet
			// manager runs: INIT, LID 0, sm_lid 0.
			name: "ib-no-sm",
			devs: []fxDev{
				ibDev("mlx5_0", "MT4123", "20.39.1002", "0000:17:00.0", 0, 0, "b83f:d203:00a1:b2c0", "2: INIT", "200 Gb/sec (4X HDR)", 0, 0),
				ibDev("mlx5_1", "MT4123", "20.39.1002", "0000:5d:00.0", 0, 1, "b83f:d203:00a1:b2d0", "2: INIT", "200 Gb/sec (4X HDR)", 0, 0),
			},
			nets: []fxNetdev{
				{name: "ibp23s0", oper: "down", mac: "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:a1:b2:c1", mtu: 4092},
				{name: "ibp93s0", oper: "down", mac: "00:00:10:29:fe:80:00:00:00:00:00:00:b8:3f:d2:03:00:a1:b2:d1", mtu: 4092},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y", modules: append(rdmaMods, "ib_ipoib"),
			devNodes: []string{"rdma_cm", "uverbs0", "uverbs1"},
		},
		eightHCA(),
		{
			// A RoCE port on an IPv6-only fabric: the global IPv6 RoCE v2
			// entry at index 3 wins; no IPv4-mapped entry exists.
			name: "roce-ipv6-only",
			devs: []fxDev{{name: "mlx5_0", hcaType: "MT4125", fw: "22.36.1010", guid: "1070:fd03:001a:2b3c",
				board: "MT_0000000359", pci: "0000:31:00.0", numa: 0, uverbs: 0,
				ports: []fxPort{activeEth("100 Gb/sec (2X HDR)",
					roce(0, "fe80::1270:fdff:fe1a:2b3c", TypeRoCEv1, "ens2f0np0"),
					roce(1, "fe80::1270:fdff:fe1a:2b3c", TypeRoCEv2, "ens2f0np0"),
					roce(2, "2001:db8:10::5", TypeRoCEv1, "ens2f0np0"),
					roce(3, "2001:db8:10::5", TypeRoCEv2, "ens2f0np0"))}}},
			nets: []fxNetdev{
				{name: "ens2f0np0", oper: "up", mac: "10:70:fd:1a:2b:3c", mtu: 9000,
					addrs: []string{"2001:db8:10::5/64", "fe80::1270:fdff:fe1a:2b3c/64"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8", "::1/128"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y", modules: rdmaMods,
			devNodes: []string{"rdma_cm", "uverbs0"},
		},
		{
			// A VM with a ConnectX NIC driver but no RDMA driver loaded.
			name: "no-rdma",
			nets: []fxNetdev{
				{name: "eth0", oper: "up", mac: "52:54:00:12:34:56", mtu: 1500, addrs: []string{"10.0.2.15/24"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "8388608 8388608", capEff: capsRoot, modules: []string{"mlx5_core", "virtio_net"},
		},
		{
			// The Soft-RoCE lab guest: rxe0 on eth0 (MTU 1500), GID 0
			// link-local v2, GID 1 IPv4-mapped v2; no PCI device behind it.
			name: "rxe-softroce",
			devs: []fxDev{{name: "rxe0", fw: "0.0.0", guid: "5054:00ff:fe12:3456", uverbs: 0,
				ports: []fxPort{withCounters(activeEth("2.5 Gb/sec (1X SDR)",
					roce(0, "fe80::5054:ff:fe12:3456", TypeRoCEv2, "eth0"),
					roce(1, "::ffff:10.0.2.15", TypeRoCEv2, "eth0")), rxeCounters)}}},
			nets: []fxNetdev{
				{name: "eth0", oper: "up", mac: "52:54:00:12:34:56", mtu: 1500, addrs: []string{"10.0.2.15/24"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "8388608 8388608", capEff: capsRoot, netns: "Y",
			modules:  []string{"ib_core", "ib_uverbs", "rdma_rxe", "crc32_generic"},
			devNodes: []string{"uverbs0"},
		},
		{
			// The lab's slip: `rdma link add rxe0 type rxe netdev eth0` on
			// the management NIC (the default route), while the data NIC
			// eth1 has its address and no RDMA device.
			name: "rxe-on-management",
			devs: []fxDev{{name: "rxe0", fw: "0.0.0", guid: "5054:00ff:fe12:3456", uverbs: 0,
				ports: []fxPort{activeEth("2.5 Gb/sec (1X SDR)",
					roce(0, "fe80::5054:ff:fe12:3456", TypeRoCEv2, "eth0"),
					roce(1, "::ffff:10.77.0.14", TypeRoCEv2, "eth0"))}}},
			nets: []fxNetdev{
				{name: "eth0", oper: "up", mac: "52:54:00:12:34:56", mtu: 1500, addrs: []string{"10.77.0.14/24"}},
				{name: "eth1", oper: "up", mac: "52:54:00:12:34:57", mtu: 1500, addrs: []string{"10.78.0.14/24"}},
				{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536, addrs: []string{"127.0.0.1/8"}},
			},
			memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y",
			modules:  []string{"ib_core", "ib_uverbs", "rdma_rxe", "crc32_generic"},
			devNodes: []string{"uverbs0"},
			route:    "eth0",
		},
	}
}

// rxeCounters is rdma_rxe's hw_counters set (drivers/infiniband/sw/rxe/
// rxe_hw_counters.c) as a lab guest shows it after a sweep with some loss.
var rxeCounters = map[string]string{
	"hw_counters/sent_pkts": "48211", "hw_counters/rcvd_pkts": "47950", "hw_counters/duplicate_request": "3",
	"hw_counters/out_of_seq_request": "41", "hw_counters/rcvd_rnr_err": "0", "hw_counters/send_rnr_err": "0",
	"hw_counters/rcvd_seq_err": "2", "hw_counters/ack_deferred": "0", "hw_counters/retry_exceeded_err": "0",
	"hw_counters/retry_rnr_exceeded_err": "0", "hw_counters/completer_retry_err": "17", "hw_counters/send_err": "0",
	"hw_counters/link_downed": "0", "hw_counters/rdma_sends": "0", "hw_counters/rdma_recvs": "0",
}

func withCounters(p fxPort, c map[string]string) fxPort {
	p.counters = c
	return p
}

func withMode(p fxPort, mode string) fxPort {
	p.roceMode = mode
	return p
}

func ibDev(name, hca, fw, pci string, numa, uverbs int, guid, state, rate string, lid, smlid int) fxDev {
	g, _ := netip.ParseAddr("fe80::" + guid)
	b := g.As16()
	b[15]++ // port GUID = node GUID + 1 on ConnectX
	return fxDev{name: name, hcaType: hca, fw: fw, guid: guid, board: "MT_0000000223", pci: pci, numa: numa, uverbs: uverbs,
		ports: []fxPort{{num: 1, state: state, phys: "5: LinkUp", layer: LayerIB, rate: rate, lid: lid, smlid: smlid,
			gids: ibGID(netip.AddrFrom16(b).String()), zeroSlots: 2}}}
}

// eightHCA is a DGX H100-style compute fabric: eight ConnectX-7 NDR ports,
// named as the platform names them (mlx5_1, 2, 7, 8 are the storage NICs,
// left out), so rail order must follow natural, not byte, order.
func eightHCA() fixture {
	f := fixture{name: "ib-8hca", memlock: "unlimited unlimited", capEff: capsRoot, netns: "Y",
		modules: append(rdmaMods, "ib_ipoib", "nvidia_peermem"), devNodes: []string{"rdma_cm"}}
	idx := []int{0, 3, 4, 5, 6, 9, 10, 11}
	bus := []int{0x18, 0x40, 0x4f, 0x5e, 0x9a, 0xc0, 0xce, 0xdc}
	for i, n := range idx {
		name := fmt.Sprintf("mlx5_%d", n)
		guid := fmt.Sprintf("a088:c203:00f1:%02x00", bus[i])
		f.devs = append(f.devs, ibDev(name, "MT4129", "28.39.1002", fmt.Sprintf("0000:%02x:00.0", bus[i]),
			i/4, i, guid, "4: ACTIVE", "400 Gb/sec (4X NDR)", 0x1a+i, 1))
		// The PMA set every port has; mlx5_4 took a hit of symbol errors and
		// retrained once, as a dirty connector does.
		pma := map[string]string{"counters/symbol_error": "0", "counters/link_downed": "0", "counters/port_rcv_errors": "0",
			"counters/port_xmit_discards": "0", "counters/link_error_recovery": "0", "counters/port_xmit_wait": "1520",
			"counters/port_xmit_data": "88123456789", "hw_counters/out_of_sequence": "0", "hw_counters/local_ack_timeout_err": "0"}
		if name == "mlx5_4" {
			pma["counters/symbol_error"], pma["counters/link_downed"], pma["counters/port_rcv_errors"] = "37", "1", "37"
		}
		f.devs[len(f.devs)-1].ports[0].counters = pma
		f.nets = append(f.nets, fxNetdev{name: fmt.Sprintf("ibp%ds0", bus[i]), oper: "up", mtu: 4092,
			mac:   fmt.Sprintf("00:00:10:29:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:f1:%02x:01", bus[i]),
			addrs: []string{fmt.Sprintf("10.%d.0.11/16", 100+i)}})
		f.devNodes = append(f.devNodes, fmt.Sprintf("uverbs%d", i))
	}
	f.nets = append(f.nets, fxNetdev{name: "lo", oper: "unknown", mac: "00:00:00:00:00:00", mtu: 65536,
		addrs: []string{"127.0.0.1/8"}})
	return f
}

// files renders a fixture as path → content.
func (f fixture) files() map[string]string {
	out := map[string]string{}
	put := func(p, v string) { out[p] = v }
	for _, d := range f.devs {
		dir := "sys/class/infiniband/" + d.name
		if d.hcaType != "" {
			put(dir+"/hca_type", d.hcaType+"\n")
			put(dir+"/board_id", d.board+"\n")
		}
		put(dir+"/fw_ver", d.fw+"\n")
		put(dir+"/node_guid", d.guid+"\n")
		put(dir+"/node_type", "1: CA\n")
		if d.pci != "" {
			put(dir+"/device/uevent", "DRIVER="+driverOf(d.name)+"\nPCI_SLOT_NAME="+d.pci+"\n")
			put(dir+"/device/numa_node", fmt.Sprintf("%d\n", d.numa))
		}
		if d.uverbs >= 0 {
			put(fmt.Sprintf("sys/class/infiniband_verbs/uverbs%d/ibdev", d.uverbs), d.name+"\n")
		}
		for _, p := range d.ports {
			pd := fmt.Sprintf("%s/ports/%d", dir, p.num)
			put(pd+"/state", p.state+"\n")
			put(pd+"/phys_state", p.phys+"\n")
			put(pd+"/link_layer", p.layer+"\n")
			put(pd+"/rate", p.rate+"\n")
			put(pd+"/lid", fmt.Sprintf("0x%x\n", p.lid))
			put(pd+"/sm_lid", fmt.Sprintf("0x%x\n", p.smlid))
			last := -1
			for _, g := range p.gids {
				a := netip.MustParseAddr(g.gid)
				put(fmt.Sprintf("%s/gids/%d", pd, g.idx), sysfsGID(a)+"\n")
				put(fmt.Sprintf("%s/gid_attrs/types/%d", pd, g.idx), g.typ+"\n")
				if g.ndev != "" {
					put(fmt.Sprintf("%s/gid_attrs/ndevs/%d", pd, g.idx), g.ndev+"\n")
				}
				last = g.idx
			}
			for i := 1; i <= p.zeroSlots; i++ {
				put(fmt.Sprintf("%s/gids/%d", pd, last+i), sysfsGID(netip.IPv6Unspecified())+"\n")
			}
			for name, v := range p.counters {
				put(fmt.Sprintf("sys/class/infiniband/%s/ports/%d/%s", d.name, p.num, name), v+"\n")
			}
			if p.roceMode != "" {
				put(fmt.Sprintf("sys/kernel/config/rdma_cm/%s/ports/%d/default_roce_mode", d.name, p.num), p.roceMode+"\n")
			}
		}
	}
	var addrs strings.Builder
	addrs.WriteString("# netdev  addresses (CIDR); stands in for the kernel's address table\n")
	for _, n := range f.nets {
		dir := "sys/class/net/" + n.name
		put(dir+"/mtu", fmt.Sprintf("%d\n", n.mtu))
		put(dir+"/operstate", n.oper+"\n")
		put(dir+"/address", n.mac+"\n")
		if len(n.addrs) > 0 {
			fmt.Fprintf(&addrs, "%s %s\n", n.name, strings.Join(n.addrs, " "))
		}
	}
	put(AddrsFile, addrs.String())
	if f.route != "" {
		// As the kernel prints it: destination, gateway and mask in
		// little-endian hex; 0x0102000a is 10.0.2.1.
		put("proc/net/route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"+
			f.route+"\t00000000\t0102000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
			f.route+"\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	}
	soft, hard, _ := strings.Cut(f.memlock, " ")
	put("proc/self/limits", "Limit                     Soft Limit           Hard Limit           Units     \n"+
		"Max cpu time              unlimited            unlimited            seconds   \n"+
		fmt.Sprintf("Max locked memory         %-20s %-20s bytes     \n", soft, hard)+
		"Max open files            1048576              1048576              files     \n")
	put("proc/self/status", fmt.Sprintf("Name:\trdmamesh\nUmask:\t0022\nState:\tR (running)\nUid:\t%[1]d\t%[1]d\t%[1]d\t%[1]d\n"+
		"Gid:\t%[1]d\t%[1]d\t%[1]d\t%[1]d\nCapInh:\t0000000000000000\nCapPrm:\t%[2]s\nCapEff:\t%[2]s\nCapBnd:\t%[3]s\nCapAmb:\t0000000000000000\n",
		f.uid, f.capEff, capsRoot))
	for _, m := range f.modules {
		put("sys/module/"+m+"/initstate", "live\n")
	}
	if f.netns != "" {
		put("sys/module/ib_core/parameters/netns_mode", f.netns+"\n")
	}
	for _, n := range f.devNodes {
		put("dev/infiniband/"+n, "")
	}
	return out
}

func driverOf(dev string) string {
	if strings.HasPrefix(dev, "mlx4") {
		return "mlx4_core"
	}
	return "mlx5_core"
}

// generated lists the tree parts the generator owns; golden files beside
// them are the golden test's.
var generated = []string{"sys", "proc", "dev", AddrsFile}

func writeFixture(root string, f fixture) error {
	for _, g := range generated {
		if err := os.RemoveAll(filepath.Join(root, g)); err != nil {
			return err
		}
	}
	for p, v := range f.files() {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestFixtureTrees keeps the committed trees equal to the specs (or
// rewrites them with -gen).
func TestFixtureTrees(t *testing.T) {
	for _, f := range fixtures() {
		root := filepath.Join("testdata", f.name)
		if *gen {
			if err := writeFixture(root, f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want := f.files()
		got := map[string]string{}
		for _, g := range generated {
			err := filepath.WalkDir(filepath.Join(root, g), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(root, p)
				got[filepath.ToSlash(rel)] = string(b)
				return err
			})
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		for p, v := range want {
			if g, ok := got[p]; !ok || !bytes.Equal([]byte(g), []byte(v)) {
				t.Errorf("%s: %s differs from its spec; run go test -run TestFixtureTrees -gen", f.name, p)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s: %s is not in the spec; run go test -run TestFixtureTrees -gen", f.name, p)
			}
		}
	}
}
