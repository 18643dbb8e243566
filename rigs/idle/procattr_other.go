//go:build !linux

package idle

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
