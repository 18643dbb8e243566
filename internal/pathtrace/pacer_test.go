package pathtrace

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Traces running at once take turns: n tokens between them take at least
// n-1 intervals.
func TestPacerSpacesConcurrentWaiters(t *testing.T) {
	const every = 20 * time.Millisecond
	p := newPacer(every)
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 2 {
				if err := p.wait(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took < 5*every {
		t.Fatalf("6 tokens in %v, want at least %v", took, 5*every)
	}
}

// A wait whose context ends gives its token back and says why.
func TestPacerCancel(t *testing.T) {
	p := newPacer(time.Hour)
	if err := p.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	due := p.next
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := p.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	if !p.next.Equal(due) {
		t.Fatalf("next token at %v after a cancelled wait, want %v", p.next, due)
	}
}

func TestPacerSharedPerInterval(t *testing.T) {
	a, b := pacerFor(time.Second), pacerFor(time.Second)
	if a != b || a == pacerFor(2*time.Second) {
		t.Fatal("want one pacer per interval in the process")
	}
}
