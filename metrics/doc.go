// Package metrics exposes rdmamesh's Prometheus metrics for the coordinator
// and the worker.
//
// Both collectors pull at scrape time from small interfaces declared here
// (CoordinatorSource, WorkerSource), so the coordinator and worker packages
// need not import Prometheus, and a scrape always shows the current state
// instead of whatever a background updater last pushed. The worker's event
// counters (tasks, sessions) are the exception: they are incremented through
// ObserveTask and ObserveSession, which the worker calls as plain funcs.
//
// Cardinality is bounded on purpose. A fabric of N nodes with R rails has
// N²·R directional cells; exporting one series per cell would put 8 million
// series in Prometheus for 1,024 nodes x 8 rails. Instead the coordinator
// exports per-node and per-HCA rollups (O(N·R)) and only the worst K pairs
// (O(K)). Every metric, its labels and its series count are in Reference()
// and, generated from it, in docs/operations.md.
package metrics
