package scale

import (
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

// processCPU is the user+system CPU this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// counter is an io.Writer that only counts.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The packages whose live heap the table reports on its own.
const (
	storePkg  = "github.com/rdmamesh/rdmamesh/coordinator/store."
	matrixPkg = "github.com/rdmamesh/rdmamesh/matrix."
)

// heapBy is the live heap allocated by code of each package prefix: the
// in-use bytes of the runtime's heap profile, each record given to the
// innermost frame of its stack that one of the prefixes names, and scaled
// for sampling as pprof scales them. It collects twice first: the profile
// describes the heap as of the last completed cycle.
func heapBy(prefixes ...string) map[string]uint64 {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, false)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+64)
	}
	out := make(map[string]uint64, len(prefixes))
	for i := range recs {
		r := &recs[i]
		if r.InUseBytes() <= 0 {
			continue
		}
		if p := innermost(r.Stack(), prefixes); p != "" {
			out[p] += uint64(scaledInUse(r, runtime.MemProfileRate))
		}
	}
	return out
}

// innermost is the first prefix (from the allocation outwards) a frame of
// stack belongs to, "" if none.
func innermost(stack []uintptr, prefixes []string) string {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		for _, p := range prefixes {
			if strings.HasPrefix(f.Function, p) {
				return p
			}
		}
		if !more {
			return ""
		}
	}
}

// scaledInUse undoes the heap profile's sampling the way pprof does
// (scaleHeapSample): an allocation of s bytes is sampled with probability
// 1 - exp(-s/rate).
func scaledInUse(r *runtime.MemProfileRecord, rate int) float64 {
	bytes, objs := float64(r.InUseBytes()), float64(r.InUseObjects())
	if rate <= 1 || objs == 0 {
		return bytes
	}
	return bytes / (1 - math.Exp(-bytes/objs/float64(rate)))
}
