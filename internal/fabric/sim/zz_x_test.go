package sim_test
import ("github.com/rdmamesh/rdmamesh/internal/fabric/sim"; "github.com/rdmamesh/rdmamesh/worker")
var _ worker.Fabric = (*sim.Node)(nil)
