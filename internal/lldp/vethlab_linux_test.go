//go:build linux

package lldp

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// onThread runs fn on a thread of its own switched into ns. The goroutine
// ends still locked, so Go throws the thread away and nothing else ever
// runs in ns by accident. Processes it starts are born in ns.
func onThread(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if ns != netns.None() {
			if err := netns.Set(ns); err != nil {
				errc <- err
				return
			}
		}
		errc <- fn()
	}()
	return <-errc
}

// vethLab is two network namespaces joined by veths, as a switch and a
// host are by cables: swp3 (leaf) to eth1 (host), which lldpd announces
// on, and swp4 to eth2, which stays silent. The namespaces have no names:
// they live while the lab holds their handles, so nothing is left in
// /run/netns and two runs cannot collide.
type vethLab struct {
	leaf, host netns.NsHandle
	dir        string
}

func newVethLab(t *testing.T) *vethLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, veths and AF_PACKET sockets")
	}
	for _, p := range []string{"lldpd", "lldpcli"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found (Debian: apt-get install lldpd): %v", p, err)
		}
	}
	lab := &vethLab{dir: t.TempDir()}
	// lldpd runs lldpcli on its configuration as its own unprivileged
	// user, which must reach the control socket: the test's directories
	// are 0700.
	for _, d := range []string{filepath.Dir(lab.dir), lab.dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []*netns.NsHandle{&lab.leaf, &lab.host} {
		err := onThread(netns.None(), func() (err error) {
			*ns, err = netns.New()
			return err
		})
		if err != nil {
			t.Skipf("cannot create a network namespace (a container without CAP_SYS_ADMIN?): %v", err)
		}
		t.Cleanup(func() { _ = ns.Close() })
	}
	leafNL, err := netlink.NewHandleAt(lab.leaf)
	if err != nil {
		t.Fatal(err)
	}
	defer leafNL.Close()
	hostNL, err := netlink.NewHandleAt(lab.host)
	if err != nil {
		t.Fatal(err)
	}
	defer hostNL.Close()
	for _, pair := range [][2]string{{"swp3", "eth1"}, {"swp4", "eth2"}} {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: pair[0]}, PeerName: pair[1], PeerNamespace: netlink.NsFd(lab.host)}
		if err := leafNL.LinkAdd(v); err != nil {
			t.Fatalf("veth %s-%s: %v", pair[0], pair[1], err)
		}
		for _, end := range []struct {
			h    *netlink.Handle
			name string
		}{{leafNL, pair[0]}, {hostNL, pair[1]}} {
			l, err := end.h.LinkByName(end.name)
			if err == nil {
				err = end.h.LinkSetUp(l)
			}
			if err != nil {
				t.Fatalf("%s up: %v", end.name, err)
			}
		}
	}
	return lab
}

// send puts one Ethernet frame on ifname in ns, as a switch would.
func (lab *vethLab) send(ns netns.NsHandle, ifname string, frame []byte) error {
	return onThread(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		to := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Halen: 6}
		copy(to.Addr[:], frame[:6])
		return unix.Sendto(fd, frame, 0, to)
	})
}

// lldpd runs lldpd in ns as its systemd unit would (plus -d to stay in the
// foreground), with its own control socket and configuration, on iface
// only; it returns the socket. The process is stopped in t.Cleanup.
func (lab *vethLab) lldpd(t *testing.T, ns netns.NsHandle, name, iface string, conf ...string) string {
	t.Helper()
	sock, cfg, logPath := filepath.Join(lab.dir, name+".socket"), filepath.Join(lab.dir, name+".conf"), filepath.Join(lab.dir, name+".log")
	if err := os.WriteFile(cfg, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// -k: no kernel version in the system description; -O: this
	// configuration instead of /etc/lldpd.conf and /etc/lldpd.d.
	cmd := exec.Command("lldpd", "-d", "-u", sock, "-I", iface, "-k", "-O", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := onThread(ns, cmd.Start); err != nil {
		t.Skipf("lldpd cannot run here: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err = <-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("lldpd %s ended (%v); its log:\n%s", name, err, b)
		}
	})
	wait.Until(t, 10*time.Second, name+"'s lldpd control socket", func() error {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("lldpd %s exited: %v\n%s", name, err, b)
		default:
		}
		_, err := os.Stat(sock)
		return err
	})
	return sock
}
