package probe

import (
	"strings"
	"testing"
)

func TestValidateNewFields(t *testing.T) {
	p := DefaultTestParams()
	p.ReadIters, p.Connect = 1000, ConnectRDMACM
	if err := p.Validate(); err != nil {
		t.Fatalf("read_iters 1000 over rdmacm: %v", err)
	}
	for _, c := range []struct {
		mod  func(*TestParams)
		want string
	}{
		{func(p *TestParams) { p.ReadIters = -1 }, "read_iters"},
		{func(p *TestParams) { p.ReadIters = 2_000_000 }, "read_iters"},
		{func(p *TestParams) { p.Connect = "cm" }, "connect"},
	} {
		q := DefaultTestParams()
		c.mod(&q)
		if err := q.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", q, err, c.want)
		}
	}
}
