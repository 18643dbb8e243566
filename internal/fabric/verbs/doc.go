// Package verbs is the real fabric provider: RDMA WRITE latency and
// bandwidth measured over libibverbs on real HCAs (or Soft-RoCE).
//
// It is the only cgo package in rdmamesh. The engine is compiled in only
// with the build tag "verbs" (and cgo); without it New reports that the
// binary was built without the engine, so `go build ./...` works on any
// machine. With the tag, libibverbs is opened with dlopen on the first New,
// never at process start: a verbs-enabled binary still runs as a
// coordinator on a host without libibverbs.so.1.
//
// A Session is one RC QP with one registered buffer. The initiator runs
// Latency (an ib_write_lat style RDMA WRITE ping-pong; one-way = RTT/2) and
// then Bandwidth (an ib_write_bw style unidirectional WRITE stream); the
// responder runs Respond, which answers the ping-pong and, when the test
// has a bandwidth part, returns only after the initiator's end-of-stream
// marker lands, so the caller knows when the QP may be torn down. Each
// measurement is one cgo call into a C loop on a locked OS thread, bounded
// by a deadline (the earlier of ctx's and TestParams.Timeout) and by ctx
// cancellation.
//
// Every failure is a *probe.Error classified where it happened (verb,
// errno, work-completion status) into the same classes the simulated
// fabric reports; classify.go holds the table.
package verbs
