package web

import (
	"context"
	"encoding/json"
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
// goroutine, cancel ctx and wait for it to return.
func (s *Server) Prepare(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := ""
	for {
		last = s.prepareNewest(ctx, last)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prepareNewest prepares the newest sweep if it has finished and differs
// from the one prepared last (last is that sweep's header key); it returns
// the key now prepared. A running sweep is left alone: its matrix changes
// with every round, and the page already loads it live. Comparing headers
// rather than matrices means an unchanged sweep costs no backend matrix
// call (which could rebuild one the coordinator dropped) and the preparer
// holds no matrix of its own.
func (s *Server) prepareNewest(ctx context.Context, last string) (key string) {
	sweeps := s.b.Sweeps()
	if len(sweeps) == 0 || sweeps[0].State == api.SweepRunning {
		return last
	}
	info := sweeps[0]
	key = fmt.Sprintf("%s|%s|%d|%d|%d|%s", info.ID, info.State, info.CellsDone, info.RetestPass, info.Retested, info.Finished)
	if key == last {
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
	start := time.Now()
	if _, err := s.gridBlob(info.ID, m); err != nil {
		s.log.Error("preparing the grid failed", "sweep", info.ID, "err", err)
		return key // the request path would fail the same way; do not spin
	}
	rails := firstPaintRails(s.views.entry(m).view())
	for _, rail := range rails {
		if _, err := s.layerBlob(info.ID, m, "status", rail); err != nil {
			s.log.Error("preparing the status layer failed", "sweep", info.ID, "rail", rail, "err", err)
			return key
		}
	}
	s.log.Debug("first-paint views prepared", "sweep", info.ID, "cells", m.NumCells(), "took", time.Since(start))
	// p50 is the layer an operator switches to first, and its all-rails
	// form walks every cell's figures for the scale (23 s at 4,096 x 8; a
	// rail's own is an eighth of that). It comes after the first paint so it
	// never delays that. Only the all-rails one: each holds n*n bytes and
	// their gzip (tens of MB at 4,096), and the view's cache keeps 24 blobs.
	if ctx.Err() != nil {
		return key // stopping: skip the long walk
	}
	if _, err := s.layerBlob(info.ID, m, secondLayer, allRails); err != nil {
		s.log.Error("preparing the p50 layer failed", "sweep", info.ID, "err", err)
		return key
	}
	s.log.Debug("p50 layer prepared", "sweep", info.ID, "took", time.Since(start))
	return key
}

// secondLayer is the value layer Prepare readies after the first paint.
const secondLayer = "p50"

// gridBlob and layerBlob are the cached answers of /grid and /layer; the
// handlers and Prepare share them, and with them the cache keys.
func (s *Server) gridBlob(id string, m *matrix.Matrix) (*blob, error) {
	e := s.cache(id).entry(m)
	return e.blob("grid:"+id, func() ([]byte, error) { return json.Marshal(e.view().grid(id)) })
}

func (s *Server) layerBlob(id string, m *matrix.Matrix, metric string, rail int) (*blob, error) {
	e := s.cache(id).entry(m)
	return e.blob(layerKey(metric, rail), func() ([]byte, error) { return e.view().encodeLayer(metric, rail) })
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
		for _, rail := range firstPaintRails(e.view()) { // built: the grid needed it
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
