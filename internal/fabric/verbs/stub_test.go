//go:build !verbs || !cgo

package verbs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestStubNew(t *testing.T) {
	f, err := New(Options{})
	if f != nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New = %v, %v; want nil and ErrUnavailable", f, err)
	}
	if !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), "libibverbs-dev") {
		t.Fatalf("error does not say how to get the engine: %v", err)
	}
}

func TestStubMethodsAreClassified(t *testing.T) {
	var f Fabric
	if f.Name() != "verbs" {
		t.Fatal(f.Name())
	}
	_, err := f.Ports(context.Background())
	var pe *probe.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Ports error %T is not a *probe.Error", err)
	}
	_, err = f.Open(context.Background(), probe.Endpoint{}, probe.DefaultTestParams())
	if !errors.As(err, &pe) {
		t.Fatalf("Open error %T is not a *probe.Error", err)
	}
}
