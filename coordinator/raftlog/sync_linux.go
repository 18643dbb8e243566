package raftlog

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data and the metadata needed to read it (its size),
// not its times: fsync's extra inode write buys raft nothing.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
