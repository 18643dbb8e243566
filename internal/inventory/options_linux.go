package inventory

import (
	"path/filepath"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// SystemOptions asks the running kernel for what a file tree cannot show:
// addresses (this netns), RLIMIT_MEMLOCK (getrlimit, not the tree's
// proc/self), the rdma netns mode over RDMA netlink (falling back to the
// module parameter on kernels without it), and access(2) on device nodes.
// root is the directory Scan's fs.FS stands on, normally "/".
func SystemOptions(root string) Options {
	return Options{
		Addrs: osAddrs,
		MemlockLimit: func() (Memlock, error) {
			var rl unix.Rlimit
			if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
				return Memlock{}, err
			}
			return Memlock{Soft: rlim(rl.Cur), Hard: rlim(rl.Max)}, nil
		},
		NetnsMode: func() (string, error) {
			mode, err := netlink.RdmaSystemGetNetnsMode()
			if err != nil {
				return "", err
			}
			return ParseNetnsMode(mode)
		},
		Access: func(p string) error {
			return unix.Access(filepath.Join(root, filepath.FromSlash(p)), unix.R_OK|unix.W_OK)
		},
	}
}

func rlim(v uint64) uint64 {
	if v == unix.RLIM_INFINITY {
		return Unlimited
	}
	return v
}
