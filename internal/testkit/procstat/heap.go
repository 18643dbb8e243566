package procstat

import (
	"runtime/metrics"
	"sync"
	"time"
)

// HeapSampler records the peak of live-plus-unswept heap objects, read
// through runtime/metrics (no stop-the-world, unlike ReadMemStats).
type HeapSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak uint64
}

// StartHeapSampler samples HeapObjects every interval until Stop.
func StartHeapSampler(every time.Duration) *HeapSampler {
	h := &HeapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			h.sample()
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *HeapSampler) sample() {
	v := HeapObjects()
	h.mu.Lock()
	h.peak = max(h.peak, v)
	h.mu.Unlock()
}

// Stop ends sampling and returns the peak.
func (h *HeapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	h.sample()
	return h.peak
}

// HeapObjects is the heap's live-plus-unswept objects now.
func HeapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
