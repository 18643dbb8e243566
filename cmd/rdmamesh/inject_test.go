package main

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseInjections(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []injection
		err  string
	}{
		{in: []string{"30s=node-05/mlx5_0:loss=5%"}, want: []injection{{30 * time.Second, []string{"node-05/mlx5_0:loss=5%"}}}},
		{in: []string{"1m=node-02:lat=5x", "30s=node-05:down", "30s=node-06:down", "2m=heal"}, want: []injection{
			{30 * time.Second, []string{"node-05:down", "node-06:down"}},
			{time.Minute, []string{"node-05:down", "node-06:down", "node-02:lat=5x"}},
			{2 * time.Minute, nil}}},
		{in: []string{"node-05:down"}, err: "want AFTER=FAULT"},
		{in: []string{"soon=node-05:down"}, err: "not a duration"},
		{in: []string{"-5s=node-05:down"}, err: "not a duration"},
		{in: []string{"5s="}, err: "want AFTER=FAULT"},
	} {
		got, err := parseInjections(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

type recorder struct {
	calls [][]string
	fail  bool
}

func (r *recorder) Inject(specs []string) error {
	r.calls = append(r.calls, specs)
	if r.fail {
		return errors.New("names no node")
	}
	return nil
}

func TestRunInjections(t *testing.T) {
	var out bytes.Buffer
	r := &recorder{}
	inj := []injection{{0, []string{"node-05:down"}}, {time.Millisecond, nil}}
	runInjections(context.Background(), r, time.Now(), inj, &out)
	if len(r.calls) != 2 || r.calls[1] != nil {
		t.Fatalf("calls %v", r.calls)
	}
	if !strings.Contains(out.String(), "faults now: node-05:down") || !strings.Contains(out.String(), "healed") {
		t.Errorf("output %q", out.String())
	}
	out.Reset()
	runInjections(context.Background(), &recorder{fail: true}, time.Now(), inj[:1], &out)
	if !strings.Contains(out.String(), "failed: names no node") {
		t.Errorf("a refused injection was not reported: %q", out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = &recorder{}
	runInjections(ctx, r, time.Now(), []injection{{time.Hour, []string{"x"}}}, &out)
	if len(r.calls) != 0 {
		t.Error("an injection ran after the context ended")
	}
}
