package fabric

import "github.com/rdmamesh/rdmamesh/internal/counters"

// CounterReader is a Fabric that reads its ports' error and congestion
// counters (package counters), the evidence behind a verdict. The verbs
// engine leaves this to sysfs, which the worker reads itself; the
// simulated fabric counts what its faults did to each test's packets.
type CounterReader interface {
	Counters(device string, port int) (counters.Snapshot, error)
}

// CountersOf is f's CounterReader, looking through Adapt's wrapper: nil
// when the fabric keeps no counters.
func CountersOf(f Fabric) CounterReader { return provided[CounterReader](f) }
