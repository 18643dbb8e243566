package verbs

import (
	"errors"
	"strings"
	"testing"
)

func TestParseGID(t *testing.T) {
	cases := []struct {
		in      string
		want    gidPolicy
		wantErr bool
	}{
		{"", gidPolicy{auto: true}, false},
		{"auto", gidPolicy{auto: true}, false},
		{" AUTO ", gidPolicy{auto: true}, false},
		{"index=3", gidPolicy{index: 3}, false},
		{"3", gidPolicy{index: 3}, false},
		{"index=0", gidPolicy{index: 0}, false},
		{"index=-1", gidPolicy{}, true},
		{"index=", gidPolicy{}, true},
		{"roce2", gidPolicy{}, true},
		{"index=70000", gidPolicy{}, true},
	}
	for _, c := range cases {
		got, err := parseGID(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("parseGID(%q) error = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if err == nil && got != c.want {
			t.Errorf("parseGID(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := []Options{
		{GID: "x"},
		{Devices: []string{""}},
		{Devices: []string{"mlx5_0", "mlx5_0"}},
		{Devices: []string{"../mlx5_0"}},
	}
	for _, o := range bad {
		if _, err := o.validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := (Options{Devices: []string{"mlx5_0", "rxe0"}, GID: "index=1"}).validate(); err != nil {
		t.Fatal(err)
	}
}

// TestNewBadOptions holds in both builds: options are checked before the
// engine is looked for.
func TestNewBadOptions(t *testing.T) {
	_, err := New(Options{GID: "bogus"})
	if err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "gid") {
		t.Fatalf("New with a bad GID: %v", err)
	}
}
