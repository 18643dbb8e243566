package scale

import (
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// startReader asks for sweep id's matrix every interval, as an open UI's
// heatmap does, until the returned func is called; that func returns the
// requests made and how many distinct analyses they got. interval <= 0
// starts nothing.
func startReader(co *coordinator.Coordinator, id string, interval time.Duration) func() (polls, matrices int) {
	if interval <= 0 {
		return func() (int, int) { return 0, 0 }
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var polls int
	seen := map[*matrix.Matrix]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if m, ok := co.Matrix(id); ok {
				polls++
				seen[m] = true
			}
		}
	}()
	return func() (int, int) {
		close(stop)
		wg.Wait()
		return polls, len(seen)
	}
}
