// Package web serves the coordinator's HTTP API under /api/v1 and the
// embedded heatmap UI at /. It sees the coordinator only through Backend, an
// interface declared here, so data flows coordinator → web and never back.
//
// # Routes
//
//	GET  /healthz                      {"status":"ok"}
//	GET  /api/v1/nodes                 []api.NodeInfo
//	GET  /api/v1/sweeps                []api.SweepInfo, newest first
//	POST /api/v1/sweeps                api.SweepRequest → 202 api.SweepInfo
//	GET  /api/v1/sweeps/{id}           api.SweepInfo
//	GET  /api/v1/sweeps/{id}/matrix    matrix.Matrix as JSON, or ?format=junit|csv (&download=1)
//	GET  /api/v1/sweeps/{id}/grid      the heatmap's node order, groups, HCA tallies, suspects, scales
//	GET  /api/v1/sweeps/{id}/layer     one heatmap layer, a byte per pair (?metric=&rail=; layer.go)
//	GET  /api/v1/sweeps/{id}/pair      every cell between ?src= and ?dst=, both directions
//	GET  /api/v1/sweeps/{id}/links/{link}/cells  the tests through cable {link}, worst first (&limit=; linkcells.go)
//	GET  /api/v1/sweeps/{id}/events    progress as Server-Sent Events (events.go)
//	GET  /api/v1/diff                  matrix.Diff of ?old= and ?new= sweeps (&limit=)
//	GET  /api/v1/live                  api.LiveInfo of the always-on mesh (404 when it is off; live.go)
//	GET  /api/v1/live/events           a "window" Server-Sent Event on every new live window
//	GET  /api/v1/topology              the fabric's switches, HCAs and cables (404 without; topology.go)
//	GET  /api/v1/cabling               each HCA port's and cable's verdict, or ?format=csv|junit (&sweep=; cabling.go)
//	POST /api/v1/cabling               the same, judged with the switches' LLDP tables in the body (cabling_post.go)
//	GET  /                             the UI (index.html, app.js, style.css)
//
// The id "latest" names the newest sweep, and api.LiveID ("live") the
// always-on mesh's rolling matrix: /api/v1/sweeps/live/{matrix,grid,layer,pair,links}
// serve it like a sweep's when the Backend is also a LiveBackend.
// Every error answer is an api.Error.
//
// # Errors from StartSweep
//
// The backend cannot import web (and web does not import the backend), so
// StartSweep's errors are mapped to a status by behaviour, searched along the
// wrapped chain with errors.As, first match wins:
//
//	interface{ Field() string }     400, {"error": err.Error(), "field": Field()}
//	interface{ Conflict() bool }    409 when it returns true: a sweep is already running
//	interface{ Unavailable() bool } 503 when it returns true: not the leader, no workers, ...
//	anything else                   500
//
// A backend error type needs only the method, e.g.
//
//	type busyError struct{}
//	func (busyError) Error() string  { return "a sweep is already running" }
//	func (busyError) Conflict() bool { return true }
package web

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Backend is what web needs from the coordinator. Implementations must be
// safe for concurrent use: every request calls them from its own goroutine.
type Backend interface {
	// Nodes lists the members the coordinator knows from gossip.
	Nodes() []api.NodeInfo
	// Status reports this replica's raft view (leader, voters).
	Status() api.Status
	// Sweeps lists every sweep the coordinator remembers, newest first.
	Sweeps() []api.SweepInfo
	// Sweep reports one sweep's header and progress.
	Sweep(id string) (api.SweepInfo, bool)
	// Matrix is the sweep's analysed matrix as it stands, also while the
	// sweep runs (untested cells and all). web encodes it without holding
	// any lock, so the backend must hand out a matrix it will not mutate
	// afterwards.
	Matrix(id string) (*matrix.Matrix, bool)
	// StartSweep starts a sweep and returns at once. ctx is the HTTP
	// request's: it ends when the client goes away, so it must not bound
	// the sweep's own lifetime. Errors map to a status as the package doc
	// describes.
	StartSweep(ctx context.Context, req api.SweepRequest) (api.SweepInfo, error)
}

// Options tune a Server. The zero value works.
type Options struct {
	// Logger receives request logs at debug level and handler failures at
	// error level. nil discards everything.
	Logger *slog.Logger
	// Title is shown in the UI's title bar and header; "" means "rdmamesh".
	Title string
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every mutating API call, and on reads unless OpenReads.
	Token     string
	OpenReads bool
	// Metrics, when set, is served at GET /metrics under the same auth as
	// the read-only API.
	Metrics http.Handler
	// Prepare, when set, is more background work for a newly finished
	// sweep (the coordinator's result metrics): Server.Prepare runs it
	// after the first-paint views and before the p50 layer, so that one
	// walk over the sweep's cells runs at a time. ctx ends when the
	// preparer stops or a newer sweep finishes.
	Prepare func(ctx context.Context)
}

// Server is the HTTP face of a coordinator.
type Server struct {
	b      Backend
	opts   Options
	log    *slog.Logger
	ui     *ui
	engine *gin.Engine
	views  viewCache
	// liveViews holds the live matrix's views apart from the sweeps'.
	liveViews viewCache

	// eventPoll is how often an event stream asks the backend for progress.
	eventPoll time.Duration
	shutMu    sync.Mutex
	shutdown  map[*http.Server]chan struct{} // see shutdownSignal
}

var releaseMode sync.Once

// New builds the server and its routes. It panics on a nil Backend or a
// broken embedded UI, both programming errors that tests catch.
func New(b Backend, opts Options) *Server {
	if b == nil {
		panic("web.New: nil Backend")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	title := opts.Title
	if title == "" {
		title = "rdmamesh"
	}
	// gin's debug mode prints route tables and warnings to stdout, which
	// would interleave with our structured logs; GIN_MODE is overridden.
	releaseMode.Do(func() { gin.SetMode(gin.ReleaseMode) })

	s := &Server{b: b, opts: opts, log: log, ui: newUI(title), eventPoll: defaultEventPoll,
		shutdown: map[*http.Server]chan struct{}{}, liveViews: viewCache{limit: maxLiveViews}}
	s.views.topo, s.liveViews.topo = s.sweepTopology, s.sweepTopology
	s.engine = s.routes()
	return s
}

// Handler returns the http.Handler serving the API and the UI.
func (s *Server) Handler() http.Handler { return s.engine }

func (s *Server) routes() *gin.Engine {
	r := gin.New()
	// The coordinator is reached directly or through a proxy we do not
	// know; never let X-Forwarded-For spoof the logged client address.
	_ = r.SetTrustedProxies(nil)
	r.HandleMethodNotAllowed = true
	r.Use(s.recoverJSON, s.logRequests)

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })

	v1 := r.Group("/api/v1", noCache, s.auth)
	v1.GET("/nodes", s.listNodes)
	v1.GET("/status", func(c *gin.Context) { c.JSON(http.StatusOK, s.b.Status()) })
	v1.GET("/sweeps", s.listSweeps)
	v1.POST("/sweeps", s.startSweep)
	v1.POST("/sweeps/:id/trace", s.postTrace)
	v1.GET("/sweeps/:id/paths", s.getPaths)
	v1.GET("/sweeps/:id/coverage", s.getCoverage)
	v1.GET("/sweeps/:id", s.getSweep)
	v1.GET("/sweeps/:id/matrix", s.getMatrix)
	v1.GET("/sweeps/:id/grid", s.getGrid)
	v1.GET("/sweeps/:id/layer", s.getLayer)
	v1.GET("/sweeps/:id/pair", s.getPair)
	v1.GET("/sweeps/:id/links/:link/cells", s.getLinkCells)
	v1.GET("/sweeps/:id/events", s.sweepEvents)
	v1.GET("/diff", s.getDiff)
	v1.GET("/live", s.getLive)
	v1.GET("/live/events", s.liveEvents)
	v1.GET("/topology", s.getTopology)
	v1.GET("/cabling", s.getCabling)
	v1.POST("/cabling", s.postCabling)

	if s.opts.Metrics != nil {
		r.GET("/metrics", s.auth, gin.WrapH(s.opts.Metrics))
	}

	index := func(c *gin.Context) { s.ui.serve(c, "index.html") }
	r.GET("/", index)
	r.HEAD("/", index)
	r.NoRoute(s.noRoute)
	r.NoMethod(func(c *gin.Context) {
		abortError(c, http.StatusMethodNotAllowed, c.Request.Method+" is not allowed on "+c.Request.URL.Path, "")
	})
	return r
}

// noRoute serves UI assets for any other GET outside /api, so new files in
// web/ui need no route, and answers JSON 404 everywhere else.
func (s *Server) noRoute(c *gin.Context) {
	p := c.Request.URL.Path
	get := c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead
	if get && !strings.HasPrefix(p, "/api/") && s.ui.serve(c, strings.TrimPrefix(p, "/")) {
		return
	}
	abortError(c, http.StatusNotFound, "no such route: "+c.Request.Method+" "+p, "")
}

// noCache makes browsers revalidate API answers on every poll; the matrix
// answer carries an ETag so revalidation is cheap when nothing changed.
func noCache(c *gin.Context) {
	c.Header("Cache-Control", "no-cache")
	c.Next()
}

func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	ctx := c.Request.Context()
	if !s.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "http request",
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()),
		slog.Int("bytes", c.Writer.Size()),
		slog.Duration("took", time.Since(start)),
		slog.String("client", c.ClientIP()))
}

// recoverJSON keeps a panicking handler from killing the coordinator and
// from answering with gin's plain-text 500.
func (s *Server) recoverJSON(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v) // net/http's own signal to drop the connection
		}
		s.log.Error("http handler panic", "method", c.Request.Method,
			"path", c.Request.URL.Path, "panic", v)
		if !c.Writer.Written() {
			abortError(c, http.StatusInternalServerError, "internal error", "")
		}
		c.Abort()
	}()
	c.Next()
}
