//go:build !linux

package inventory

// SystemOptions on non-Linux systems can only ask for addresses; RDMA
// discovery is Linux-only, so the rest stays with the tree's files.
func SystemOptions(root string) Options {
	return Options{Addrs: osAddrs}
}
