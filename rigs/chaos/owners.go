package chaos

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// connKey is a loopback TCP connection seen from its client: the client's
// port and the server's. A local port alone is ambiguous: Linux gives the
// same ephemeral port to connections towards different servers.
type connKey struct{ client, server uint16 }

// socketOwners maps the TCP connections of the given processes to the
// process's name (Linux /proc). The fleet sees a coordinator's task arrive
// on one of them: while two leaders are alive (a partition) this is how a
// task's sender is told, as long as the connection is still open (the
// coordinators keep idle worker connections for two minutes).
func socketOwners(pids map[string]int) map[connKey]string {
	inodes := map[string]string{} // socket inode → owner
	for name, pid := range pids {
		if pid <= 0 {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if ino, ok := strings.CutPrefix(l, "socket:["); ok {
				inodes[strings.TrimSuffix(ino, "]")] = name
			}
		}
	}
	out := map[connKey]string{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 {
				continue
			}
			owner, ok := inodes[fs[9]]
			if !ok {
				continue
			}
			local, ok1 := hexPort(fs[1])
			remote, ok2 := hexPort(fs[2])
			if ok1 && ok2 {
				out[connKey{local, remote}] = owner
			}
		}
		f.Close()
	}
	return out
}

// hexPort reads the port of a /proc/net/tcp address ("0100007F:1F90").
func hexPort(addr string) (uint16, bool) {
	_, h, ok := strings.Cut(addr, ":")
	if !ok {
		return 0, false
	}
	p, err := strconv.ParseUint(h, 16, 16)
	return uint16(p), err == nil
}
