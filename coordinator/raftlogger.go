package coordinator

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/rdmamesh/rdmamesh/internal/member"
)

// raftLogger is the hclog.Logger raft and its transport log through: each
// line reaches slog at the level raft gave it, its key-value pairs as
// attributes, so an operator's warn filter sees raft's warnings and only
// them.
//
// Two judgements sit on top of raft's own levels:
//   - raft's info lines (every state change, every snapshot) are detail:
//     they reach slog only when it logs debug, still at info.
//   - a replica that has never heard from a leader starts an election when
//     its first heartbeat timeout passes, and raft warns about it, with an
//     empty last-leader-id. That is how every cluster, and every single
//     coordinator, elects its first leader: info. With a last leader it
//     is a failover: warn.
type raftLogger struct {
	l       *slog.Logger
	name    string
	implied []any
	level   *atomic.Int32 // hclog.Level, shared by loggers made With or Named
}

func newRaftLogger(l *slog.Logger) *raftLogger {
	lv := new(atomic.Int32)
	// Trace is raft's every RPC: left out unless asked for with SetLevel.
	lv.Store(int32(hclog.Debug))
	return &raftLogger{l: l, name: "raft", level: lv}
}

// electionWarning is raft's warning when a follower's heartbeat timer
// fires; lastLeaderKey is its argument naming the leader it last heard.
const (
	electionWarning = "heartbeat timeout reached, starting election"
	lastLeaderKey   = "last-leader-id"
)

// firstElection says whether a warning is a replica's first election: no
// leader heard from since it started.
func firstElection(msg string, args []any) bool {
	if msg != electionWarning {
		return false
	}
	for i := 0; i+1 < len(args); i += 2 {
		if k, _ := args[i].(string); k == lastLeaderKey {
			return fmt.Sprint(args[i+1]) == ""
		}
	}
	return false
}

func (r *raftLogger) slogLevel(level hclog.Level, msg string, args []any) (slog.Level, bool) {
	switch {
	case level == hclog.Off || level < r.GetLevel():
		return 0, false
	case level >= hclog.Error:
		return slog.LevelError, true
	case level == hclog.Warn && firstElection(msg, args):
		return slog.LevelInfo, true
	case level == hclog.Warn:
		return slog.LevelWarn, true
	case level == hclog.Info:
		return slog.LevelInfo, r.l.Enabled(context.Background(), slog.LevelDebug)
	default:
		return slog.LevelDebug, true
	}
}

func (r *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	lv, ok := r.slogLevel(level, msg, args)
	if !ok || !r.l.Enabled(context.Background(), lv) {
		return
	}
	attrs := make([]any, 0, 2+len(r.implied)+len(args))
	attrs = append(attrs, "component", r.name)
	attrs = append(attrs, r.implied...)
	attrs = append(attrs, args...)
	r.l.Log(context.Background(), lv, msg, attrs...)
}

func (r *raftLogger) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLogger) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLogger) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLogger) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLogger) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLogger) enabled(level hclog.Level) bool {
	lv, ok := r.slogLevel(level, "", nil)
	return ok && r.l.Enabled(context.Background(), lv)
}

func (r *raftLogger) IsTrace() bool { return r.enabled(hclog.Trace) }
func (r *raftLogger) IsDebug() bool { return r.enabled(hclog.Debug) }
func (r *raftLogger) IsInfo() bool  { return r.enabled(hclog.Info) }
func (r *raftLogger) IsWarn() bool  { return r.enabled(hclog.Warn) }
func (r *raftLogger) IsError() bool { return r.enabled(hclog.Error) }

func (r *raftLogger) ImpliedArgs() []any { return r.implied }

func (r *raftLogger) With(args ...any) hclog.Logger {
	c := *r
	c.implied = append(append([]any(nil), r.implied...), args...)
	return &c
}

func (r *raftLogger) Name() string { return r.name }

func (r *raftLogger) Named(name string) hclog.Logger {
	c := *r
	c.name = r.name + "." + name
	return &c
}

func (r *raftLogger) ResetNamed(name string) hclog.Logger {
	c := *r
	c.name = name
	return &c
}

func (r *raftLogger) SetLevel(level hclog.Level) { r.level.Store(int32(level)) }

func (r *raftLogger) GetLevel() hclog.Level { return hclog.Level(r.level.Load()) }

// StandardLogger and StandardWriter serve the few raft paths that want a
// *log.Logger (none of raft's own lines carry a level there): warn, as
// raft only routes problems through them.
func (r *raftLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return log.New(r.StandardWriter(nil), "", 0)
}

func (r *raftLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return member.LogWriter(r.l.With("component", r.name), slog.LevelWarn)
}
