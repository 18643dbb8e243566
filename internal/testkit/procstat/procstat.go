// Package procstat reads what the test rigs measure of a process from
// Linux's /proc: resident memory (VmRSS, its peak VmHWM) and CPU time, and
// guards a run's memory (Guard). The benchmark (rigs/scale),
// the chaos harness and the idle-cost harness share it. Off Linux every
// reading is 0.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Self names this process to every reader. A pid of 0 (a child not
// started, or gone) reads as a process that does not exist, never as this
// one.
const Self = -1

func dir(pid int) string {
	switch {
	case pid == Self:
		return "/proc/self"
	case pid <= 0:
		return "/proc/no-such-process"
	}
	return "/proc/" + strconv.Itoa(pid)
}

// Status reads a "VmRSS:   1234 kB" style field of /proc/<pid>/status in
// bytes; 0 when the process is gone, the field is missing or there is no
// /proc.
func Status(pid int, field string) uint64 {
	b, err := os.ReadFile(dir(pid) + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, _ := strconv.ParseUint(f[0], 10, 64)
		return kb << 10
	}
	return 0
}

// RSS is the resident set (VmRSS) in bytes.
func RSS(pid int) uint64 { return Status(pid, "VmRSS") }

// HWM is the peak resident set (VmHWM) in bytes, since the start or the
// last ResetPeak.
func HWM(pid int) uint64 { return Status(pid, "VmHWM") }

// ResetPeak makes VmHWM start again from the current RSS (clear_refs 5),
// so one phase's peak is not another's. Another user's process refuses.
func ResetPeak(pid int) error { return os.WriteFile(dir(pid)+"/clear_refs", []byte("5"), 0) }

// CPU is the user and system time the process has used, all its threads
// together (utime + stime of /proc/<pid>/stat), at the kernel's 10 ms
// tick; 0 when the process is gone.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(dir(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses itself: the fixed fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s/stat: no command name in %q", dir(pid), s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%s/stat: %d fields after the name, want at least 13", dir(pid), len(f))
	}
	// Fields 14 and 15 of stat(5); f[0] is field 3 (state).
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s/stat: utime %q, stime %q", dir(pid), f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// userHZ is the unit of utime and stime (sysconf(_SC_CLK_TCK)): 100 on
// every Linux architecture Go supports.
const userHZ = 100

// Steal is the CPU time the hypervisor has taken from this machine's CPUs
// since boot (/proc/stat's steal, all CPUs together); 0 where it cannot be
// read. A virtual machine's runs drift with it for reasons not their own,
// so a rig reports it beside its timings.
func Steal() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return parseSteal(string(b))
}

// parseSteal reads the steal field (the 8th) of /proc/stat's "cpu" line,
// in USER_HZ ticks.
func parseSteal(stat string) time.Duration {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	ticks, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ticks) * (time.Second / userHZ)
}

// MB formats bytes as whole MiB, the rigs' unit in messages.
func MB(b uint64) string { return fmt.Sprintf("%d MB", b>>20) }
