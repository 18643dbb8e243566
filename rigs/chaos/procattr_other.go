//go:build !linux

package chaos

import "syscall"

// childAttr: without Pdeathsig, only the driver's own cleanup (deferred and
// on signals) ends the children.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
