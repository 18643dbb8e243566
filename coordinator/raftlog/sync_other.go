//go:build !linux

package raftlog

import "os"

func datasync(f *os.File) error { return f.Sync() }
