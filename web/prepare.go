package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// DefaultPrepareEvery is how often Prepare looks for a newly finished sweep.
const DefaultPrepareEvery = time.Second

// Prepare readies the first-paint answers (the grid and the status layers
// its first view draws) of the newest sweep once it has finished, so the first
// browser to open it is not the one that waits while the server walks
// millions of cells (1.4 s of a 1,024-node first load). It polls the
// backend every interval until ctx ends; the caller owns it: run it in a
// goroutine, cancel ctx and wait for it to return. A walk under way when ctx
// ends stops within milliseconds, keeping nothing half-built, so a stopping
// coordinator does not wait out a walk of tens of seconds.
func (s *Server) Prepare(ctx context.Context, every time.Duration) {
	last := s.prepareNewest(ctx, "", every)
	tick(ctx, every, func() bool {
		last = s.prepareNewest(ctx, last, every)
		return true
	})
}

// tick calls fn every interval until ctx ends or fn returns false.
func tick(ctx context.Context, every time.Duration, fn func() bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}

// errSuperseded is why a preparation stops when a newer sweep finishes.
var errSuperseded = errors.New("a newer sweep finished")

// newestFinished is the newest sweep and its key when it has finished. A
// running sweep is left alone: its matrix changes with every round, and
// the page already loads it live. The key is the header's, not the
// matrix: an unchanged sweep costs no backend matrix call (which could
// rebuild one the coordinator dropped) and the preparer holds no matrix
// of its own.
func (s *Server) newestFinished() (info api.SweepInfo, key string, ok bool) {
	sweeps := s.b.Sweeps()
	if len(sweeps) == 0 || sweeps[0].State == api.SweepRunning {
		return info, "", false
	}
	info = sweeps[0]
	key = fmt.Sprintf("%s|%s|%d|%d|%d|%s", info.ID, info.State, info.CellsDone, info.RetestPass, info.Retested, info.Finished)
	return info, key, true
}

// prepareNewest prepares the newest sweep if it has finished and differs
// from the one prepared last (last is that sweep's key); it returns the
// key now prepared.
func (s *Server) prepareNewest(ctx context.Context, last string, every time.Duration) (key string) {
	info, key, ok := s.newestFinished()
	if !ok || key == last {
		return last
	}
	// The preparer runs outside any request, where gin's recovery does
	// not reach: a bug here must cost a log line, not the coordinator.
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("preparing the first-paint views panicked", "sweep", info.ID, "panic", r)
		}
	}()
	m, ok := s.b.Matrix(info.ID)
	if !ok || m == nil {
		return last
	}
	// The walks take tens of seconds at thousands of nodes; once a newer
	// sweep has finished they prepare what nobody opens by default.
	ctx, stop := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); s.stopWhenSuperseded(ctx, stop, key, every) }()
	defer func() { stop(nil); <-watched }()

	start := time.Now()
	if _, err := s.gridBlob(ctx, info.ID, m); err != nil {
		s.stepFailed(ctx, "the grid", info.ID, err)
		return key // the request path would fail the same way; do not spin
	}
	e := s.views.entry(info.ID, m)
	for _, rail := range firstPaintRails(e.v.Load()) { // built: the grid needed it
		if _, err := s.layerBlob(ctx, info.ID, m, "status", rail); err != nil {
			s.stepFailed(ctx, "the status layer", info.ID, err, "rail", rail)
			return key
		}
	}
	s.log.Debug("first-paint views prepared", "sweep", info.ID, "cells", m.NumCells(), "took", time.Since(start))
	if s.opts.Prepare != nil {
		// Between the two: at 4,096 x 8 the result metrics took a scrape
		// 8.8 s beside the p50 walk (Prometheus gives up at 10), 5 s alone.
		s.prepareBackend(ctx, info.ID)
		if ctx.Err() != nil {
			s.stepFailed(ctx, "the backend's own preparation", info.ID, ctx.Err())
			return key
		}
	}
	// p50 is the layer an operator switches to first, and its all-rails
	// form walks every cell's figures for the scale (23 s at 4,096 x 8; a
	// rail's own is an eighth of that). It comes after the first paint so it
	// never delays that. Only the all-rails one: each holds n*n bytes and
	// their gzip (tens of MB at 4,096), and the view's cache keeps 24 blobs.
	if _, err := s.layerBlob(ctx, info.ID, m, secondLayer, allRails); err != nil {
		s.stepFailed(ctx, "the p50 layer", info.ID, err)
		return key
	}
	s.log.Debug("p50 layer prepared", "sweep", info.ID, "took", time.Since(start))
	return key
}

// prepareBackend runs Options.Prepare; a panic in it costs a log line
// naming it, and the p50 layer is still prepared.
func (s *Server) prepareBackend(ctx context.Context, id string) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("the backend's own preparation panicked", "sweep", id, "panic", r)
		}
	}()
	s.opts.Prepare(ctx)
}

// stopWhenSuperseded cancels the preparation of the sweep with key when a
// newer sweep, or a newer version of this one, has finished, looking every
// interval until ctx ends.
func (s *Server) stopWhenSuperseded(ctx context.Context, stop context.CancelCauseFunc, key string, every time.Duration) {
	tick(ctx, every, func() bool {
		if _, newest, ok := s.newestFinished(); ok && newest != key {
			stop(errSuperseded)
			return false
		}
		return true
	})
}

// stepFailed logs a preparation step that did not complete: an error,
// unless its walk was given up on purpose (a stop, a newer sweep).
func (s *Server) stepFailed(ctx context.Context, what, id string, err error, attrs ...any) {
	if givenUp(ctx, err) {
		s.log.Debug("preparation stopped", append(attrs, "step", what, "sweep", id, "why", context.Cause(ctx))...)
		return
	}
	s.log.Error("preparing "+what+" failed", append(attrs, "sweep", id, "err", err)...)
}

// secondLayer is the value layer Prepare readies after the first paint.
const secondLayer = "p50"

// gridBlob and layerBlob are the cached answers of /grid and /layer; the
// handlers and Prepare share them, and with them the cache keys.
// A walk they start stops when ctx ends, failing with its error.
func (s *Server) gridBlob(ctx context.Context, id string, m *matrix.Matrix) (*blob, error) {
	e := s.cache(id).entry(id, m)
	return e.blob("grid:"+id, func() ([]byte, error) {
		v, err := e.view(ctx)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v.grid(id))
	})
}

func (s *Server) layerBlob(ctx context.Context, id string, m *matrix.Matrix, metric string, rail int) (*blob, error) {
	e := s.cache(id).entry(id, m)
	return e.blob(layerKey(metric, rail), func() ([]byte, error) {
		v, err := e.view(ctx)
		if err != nil {
			return nil, err
		}
		return v.encodeLayer(ctx, metric, rail)
	})
}

// layerKey is a layer's key in its view's blob cache.
func layerKey(metric string, rail int) string { return fmt.Sprintf("layer:%s:%d", metric, rail) }

// Prepared reports whether sweep id's first-paint answers are cached for
// its current matrix (tests and the first-paint benchmark wait on it).
func (s *Server) Prepared(id string) bool {
	return s.cached(id, func(e *viewEntry) bool {
		if _, ok := e.blobs["grid:"+id]; !ok {
			return false
		}
		for _, rail := range firstPaintRails(e.v.Load()) { // built: the grid needed it
			if _, ok := e.blobs[layerKey("status", rail)]; !ok {
				return false
			}
		}
		return true
	})
}

// PreparedValues reports whether the value layer Prepare readies after the
// first paint (p50, all rails) is cached for sweep id's current matrix.
func (s *Server) PreparedValues(id string) bool {
	return s.cached(id, func(e *viewEntry) bool {
		_, ok := e.blobs[layerKey(secondLayer, allRails)]
		return ok
	})
}

// cached asks has about the view cache entry of sweep id's current matrix,
// under its lock; false when there is none.
func (s *Server) cached(id string, has func(e *viewEntry) bool) bool {
	m, ok := s.b.Matrix(id)
	if !ok || m == nil {
		return false
	}
	e := s.views.lookup(m)
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return has(e)
}

// firstPaintRails are the rails of the status layers the page's first view
// draws: all rails folded, and each rail when the overview shows rails one
// by one.
func firstPaintRails(v *view) []int {
	rails := []int{allRails}
	if v != nil && v.overview().View == "rails" {
		for r := range max(v.m.Rails, 0) {
			rails = append(rails, r)
		}
	}
	return rails
}
