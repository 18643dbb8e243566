package chaos

import "syscall"

// childAttr puts children in their own process group (a Ctrl-C in the
// terminal reaches only the driver, which then kills them on its terms) and
// has the kernel SIGKILL them if the driver dies without cleaning up.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
