package coordinator

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// records keeps what reaches slog, for tests that read levels and attributes.
type records struct {
	mu    sync.Mutex
	level slog.Level
	got   []slog.Record
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) all() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func attr(rec slog.Record, key string) string {
	var v string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

func TestRaftLoggerLevels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slog   slog.Level // the operator's level
		level  hclog.Level
		msg    string
		args   []any
		want   slog.Level
		logged bool
	}{
		{"an error is an error", slog.LevelInfo, hclog.Error, "failed to appendEntries", []any{"peer", "c1"}, slog.LevelError, true},
		{"a warning is a warning", slog.LevelInfo, hclog.Warn, "failed to contact", []any{"server-id", "c2"}, slog.LevelWarn, true},
		{"the first election is routine", slog.LevelInfo, hclog.Warn, electionWarning,
			[]any{"last-leader-addr", raft.ServerAddress(""), lastLeaderKey, raft.ServerID("")}, slog.LevelInfo, true},
		{"an election after a leader is a failover", slog.LevelInfo, hclog.Warn, electionWarning,
			[]any{"last-leader-addr", raft.ServerAddress("10.0.0.1:7000"), lastLeaderKey, raft.ServerID("c0")}, slog.LevelWarn, true},
		{"an election without its arguments stays a warning", slog.LevelInfo, hclog.Warn, electionWarning, nil, slog.LevelWarn, true},
		{"raft's info is detail at info", slog.LevelInfo, hclog.Info, "entering follower state", nil, 0, false},
		{"raft's info shows when debugging", slog.LevelDebug, hclog.Info, "entering follower state", nil, slog.LevelInfo, true},
		{"debug stays debug", slog.LevelDebug, hclog.Debug, "appendEntries", nil, slog.LevelDebug, true},
		{"a warn filter drops the first election", slog.LevelWarn, hclog.Warn, electionWarning,
			[]any{lastLeaderKey, raft.ServerID("")}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &records{level: tc.slog}
			newRaftLogger(slog.New(h)).Named("net").With("local", "c0").Log(tc.level, tc.msg, tc.args...)
			got := h.all()
			if !tc.logged {
				if len(got) != 0 {
					t.Fatalf("logged %v %q, want nothing", got[0].Level, got[0].Message)
				}
				return
			}
			if len(got) != 1 || got[0].Level != tc.want || got[0].Message != tc.msg {
				t.Fatalf("got %v, want one %v record %q", got, tc.want, tc.msg)
			}
			if c, l := attr(got[0], "component"), attr(got[0], "local"); c != "raft.net" || l != "c0" {
				t.Fatalf("component %q, local %q: want raft.net and the implied c0", c, l)
			}
		})
	}
}

// A single coordinator elects itself with nothing at warn or above: an
// operator's warn filter stays quiet on every start.
func TestSingleCoordinatorStartsWithoutAWarning(t *testing.T) {
	h := &records{level: slog.LevelDebug}
	c, err := Start(Options{Name: "solo", GossipBind: "127.0.0.1:0", FastRaft: true, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	wait.Within(t, 30*time.Second, "the coordinator to lead", c.IsLeader)
	var election bool
	for _, rec := range h.all() {
		if rec.Level >= slog.LevelWarn {
			t.Errorf("start logged %v %q", rec.Level, rec.Message)
		}
		election = election || rec.Message == electionWarning
	}
	if !election {
		t.Errorf("raft's election line never reached slog: the test no longer sees what it guards")
	}
}
