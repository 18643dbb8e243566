package idle

import "syscall"

// childAttr has the kernel kill the measured worker if the harness dies
// without stopping it.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
