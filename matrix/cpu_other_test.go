//go:build !unix

package matrix

// processCPU is unknown here; the benchmark then skips its CPU metric.
func processCPU() float64 { return -1 }
