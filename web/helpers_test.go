package web

import (
	"context"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// mustView is m's view, built with nothing to stop it.
func mustView(tb testing.TB, m *matrix.Matrix) *view {
	tb.Helper()
	v, err := newView(context.Background(), m, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// mustScale is a value metric's scale, computed with nothing to stop it.
func mustScale(tb testing.TB, v *view, name string) scale {
	tb.Helper()
	sc, err := v.scale(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}
