package inventory

import (
	"errors"
	"io/fs"
	"net"
	"net/netip"
)

// AddrsFile is the fixture file, at the root of a captured tree, that stands
// in for the kernel's address tables: sysfs has no netdev IP addresses. See
// ParseAddrs for its format and testdata/README.md for an example.
const AddrsFile = "addrs"

// FixtureOptions reads everything from the tree itself, so a fixture or a
// tree captured on another machine gives the same answer everywhere:
// addresses from AddrsFile (absent: addresses unknown), memlock from
// proc/self/limits, capabilities from proc/self/status, the rdma netns mode
// from ib_core's module parameter, and device nodes by existence only.
func FixtureOptions(fsys fs.FS) (Options, error) {
	var o Options
	text, err := readValue(fsys, AddrsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return o, err
	}
	table, err := ParseAddrs(text)
	if err != nil {
		return o, err
	}
	o.Addrs = func(netdev string) ([]netip.Prefix, error) { return table[netdev], nil }
	return o, nil
}

// osAddrs asks the kernel of this network namespace, which is the namespace
// whose netdevs the GID entries must live in for RTR to succeed.
func osAddrs(netdev string) ([]netip.Prefix, error) {
	ifi, err := net.InterfaceByName(netdev)
	if err != nil {
		return nil, err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ones, _ := ipn.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return out, nil
}
