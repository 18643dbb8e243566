//go:build !verbs || !cgo

package verbs

import (
	"context"
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Fabric is a placeholder in builds without the engine; New never returns
// one, so its methods only exist to keep callers compiling.
type Fabric struct{}

var (
	_ fabric.Fabric = (*Fabric)(nil)
	_ fabric.Prober = (*Fabric)(nil)
)

// New validates opts and then reports that the engine is not compiled in.
func New(opts Options) (*Fabric, error) {
	if _, err := opts.validate(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: built without the verbs engine; rebuild with `make build` on a host with libibverbs-dev", ErrUnavailable)
}

func (*Fabric) Name() string { return "verbs" }

func (*Fabric) Ports(context.Context) ([]probe.Port, error) { return nil, errStub() }

func (*Fabric) Open(context.Context, probe.Endpoint, probe.TestParams) (fabric.Session, error) {
	return nil, errStub()
}

func (*Fabric) OpenProbe(context.Context, string, int) (fabric.ProbePort, error) {
	return nil, errStub()
}

// Close is a no-op here.
func (*Fabric) Close() error { return nil }

func errStub() *probe.Error {
	return &probe.Error{Class: probe.ClassInternal, Cause: "built without the verbs engine",
		Fix: "rebuild with `make build` on a host with libibverbs-dev"}
}
