package wire

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A TaskDecoder gives what Decode gives for a run of tasks whose rails
// sections repeat, change by one byte, change length, or switch between a
// mirrored and a whole reverse half, and after a malformed task.
func TestTaskDecoderMatchesDecode(t *testing.T) {
	ep := func(dev string, gid int) probe.Endpoint { return probe.Endpoint{Device: dev, Port: 1, GIDIndex: gid} }
	plan := func(n, gid int) []probe.RailPair {
		out := make([]probe.RailPair, n)
		for i := range out {
			out[i] = probe.RailPair{Rail: i, Src: ep("mlx5_0", gid), Dst: ep("mlx5_1", 3)}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var tasks []Task
	for i := range 300 {
		fwd := plan(1+rng.IntN(3), 3+rng.IntN(2)) // few distinct sections: many repeats
		task := Task{SweepID: "s", Round: i, Src: "a", Dst: "b", Rails: fwd, Ticket: "t"}
		switch rng.IntN(4) {
		case 0: // forward only
		case 1:
			task.Reverse = &ReverseTask{Rails: mirror(fwd)}
		case 2: // the same counts, a reverse that is not the mirror
			back := mirror(fwd)
			back[0].Dst.GIDIndex = 1
			task.Reverse = &ReverseTask{Rails: back}
		case 3:
			task.Reverse = &ReverseTask{Rails: []probe.RailPair{}}
		}
		tasks = append(tasks, task)
	}
	var d TaskDecoder
	var prev Task
	hits, same := 0, 0
	for i, task := range tasks {
		b := TaskMsg.Append(nil, &task)
		if i == 150 {
			if _, err := d.Decode(b[:len(b)-1]); err == nil {
				t.Fatal("a truncated task decoded")
			}
		}
		want, err := TaskMsg.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		wasValid := len(d.m.sect) > 0
		got, err := d.Decode(b)
		if err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
		if wasValid && len(got.Rails) > 0 && &got.Rails[0] == &d.m.rails[0] && i > 0 && reflect.DeepEqual(tasks[i-1].Rails, task.Rails) {
			hits++
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("task %d:\n got %+v\nwant %+v", i, got, want)
		}
		if d.SameRails() {
			same++
			if !reflect.DeepEqual(want.Rails, prev.Rails) || !reflect.DeepEqual(reverseHalf(&want), reverseHalf(&prev)) {
				t.Fatalf("task %d: SameRails, but its rails are not task %d's", i, i-1)
			}
		}
		prev = want
	}
	if same < 10 {
		t.Errorf("SameRails said so for only %d of 300 tasks", same)
	}
	// Bytes that are not a task have no rails to be the same.
	b := TaskMsg.Append(nil, &tasks[len(tasks)-1])
	if _, err := d.Decode(b); err != nil || !d.SameRails() {
		t.Fatalf("the same task again: %v, SameRails %v", err, d.SameRails())
	}
	for _, bad := range [][]byte{nil, b[:3]} {
		if _, err := d.Decode(bad); err == nil || d.SameRails() {
			t.Fatalf("%d bytes of a task: %v, SameRails %v", len(bad), err, d.SameRails())
		}
		if _, err := d.Decode(b); err != nil {
			t.Fatal(err)
		}
	}
	if hits < 30 {
		t.Errorf("only %d of 300 tasks took the remembered rails", hits)
	}
}

func reverseHalf(t *Task) []probe.RailPair {
	if t.Reverse == nil {
		return nil
	}
	return t.Reverse.Rails
}

// The remembered rails are not taken when the section differs only in a
// byte past the rails a shorter section would end at.
func TestTaskDecoderSeesALongerSection(t *testing.T) {
	ep := probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3}
	one := Task{SweepID: "s", Rails: []probe.RailPair{{Rail: 0, Src: ep, Dst: ep}}}
	two := Task{SweepID: "s", Rails: []probe.RailPair{{Rail: 0, Src: ep, Dst: ep}, {Rail: 1, Src: ep, Dst: ep}}}
	var d TaskDecoder
	for _, task := range []Task{one, two, one, two} {
		got, err := d.Decode(TaskMsg.Append(nil, &task))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Rails, task.Rails) {
			t.Fatalf("got %+v, want %+v", got.Rails, task.Rails)
		}
	}
}

// A task result with its rails spliced in is the bytes Append writes.
func TestAppendTaskResultMatchesAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 300 {
		var v TaskResult
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		if i%7 == 0 {
			v.Rails = nil
		}
		codes := i%3 == 0
		var back EncodedRails
		if v.Reverse != nil {
			back = EncodeRailResults(v.Reverse.Rails, codes)
		}
		got := AppendTaskResult([]byte("x"), &v, EncodeRailResults(v.Rails, codes), back)
		if want := ResultCodec(codes).Append([]byte("x"), &v); string(got) != string(want) {
			t.Fatalf("result %d (codes %v): spliced %x, appended %x", i, codes, got, want)
		}
	}
}

// A TaskEncoder writes the bytes TaskMsg.Append writes, for a run of
// tasks whose rails repeat, change in one endpoint, switch between nil
// and empty, and gain or lose a reverse half, mirrored or not.
func TestTaskEncoderMatchesAppend(t *testing.T) {
	ep := func(gid int) probe.Endpoint { return probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: gid} }
	plan := func(n, gid int) []probe.RailPair {
		out := make([]probe.RailPair, n)
		for i := range out {
			out[i] = probe.RailPair{Rail: i, Src: ep(gid), Dst: ep(3)}
		}
		return out
	}
	var e TaskEncoder
	hits := 0
	for i := range 400 {
		task := Task{SweepID: "s", Round: i, Src: "a", Dst: "b", Ticket: "t", Rails: plan(1+(i/20)%3, 3+(i/50)%2)}
		switch ((i + 5) / 10) % 5 { // a half appears alone at task 45
		case 0:
		case 1:
			task.Reverse = &ReverseTask{Rails: mirror(task.Rails)}
		case 2:
			back := mirror(task.Rails)
			back[0].Dst.GIDIndex = 9
			task.Reverse = &ReverseTask{Rails: back}
		case 3:
			task.Reverse = &ReverseTask{Rails: []probe.RailPair{}}
		case 4:
			task.Reverse = &ReverseTask{}
		}
		if i%40 == 39 {
			task.Rails = nil
		}
		if i%40 == 38 {
			task.Rails = []probe.RailPair{}
		}
		wasValid := e.same(task.Rails, reverseOf(&task), task.Reverse != nil)
		got := e.Append([]byte("x"), &task)
		if want := TaskMsg.Append([]byte("x"), &task); string(got) != string(want) {
			t.Fatalf("task %d: encoder wrote %x, Append %x", i, got, want)
		}
		if wasValid {
			hits++
		}
	}
	if hits < 200 {
		t.Errorf("only %d of 400 tasks took the remembered rails section", hits)
	}
}

func mirror(p []probe.RailPair) []probe.RailPair {
	out := make([]probe.RailPair, len(p))
	for i := range p {
		out[i] = mirrored(p[i])
	}
	return out
}

func reverseOf(t *Task) []probe.RailPair {
	if t.Reverse == nil {
		return nil
	}
	return t.Reverse.Rails
}

// What a decoder or an encoder holds before its first task, or after a
// task it could not decode, is never taken for a remembered section.
func TestTaskMemosStartAndRecoverEmpty(t *testing.T) {
	ep := func(gid int) probe.Endpoint { return probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: gid} }
	a := Task{SweepID: "s", Rails: []probe.RailPair{{Rail: 0, Src: ep(3), Dst: ep(3)}, {Rail: 1, Src: ep(3), Dst: ep(3)}}}
	other := a
	other.Rails = []probe.RailPair{{Rail: 0, Src: ep(4), Dst: ep(4)}, {Rail: 1, Src: ep(4), Dst: ep(5)}}
	var d TaskDecoder
	for i, step := range []struct {
		task Task
		cut  bool
	}{{a, false}, {other, true}, {a, false}} {
		b := TaskMsg.Append(nil, &step.task)
		if step.cut {
			if _, err := d.Decode(b[:len(b)-1]); err == nil {
				t.Fatal("a cut task decoded")
			}
			continue
		}
		got, err := d.Decode(b)
		if err != nil || !reflect.DeepEqual(got.Rails, step.task.Rails) {
			t.Fatalf("step %d: %+v %v, want %+v", i, got.Rails, err, step.task.Rails)
		}
	}
	var e TaskEncoder
	empty := Task{SweepID: "s"} // no rails, no reverse half: what a zero encoder holds
	if got, want := e.Append(nil, &empty), TaskMsg.Append(nil, &empty); string(got) != string(want) {
		t.Fatalf("a fresh encoder wrote %x, Append %x", got, want)
	}
}

// A borrowing decoder's names and tickets point into the message, and
// nothing else it hands out does: the rails it keeps for the next task
// survive the message's buffer being reused, and a task's parameters are
// its own.
func TestTaskDecoderBorrowsOnlyStrings(t *testing.T) {
	rails := []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3},
		Dst: probe.Endpoint{Device: "mlx5_1", Port: 1, GIDIndex: 3}}}
	task := Task{SweepID: "sweep-1", Round: 4, Src: "node-a", Dst: "node-b", DstAPI: "10.0.0.2:7100", SrcAPI: "10.0.0.1:7100",
		Rails: rails, Ticket: "ticket", Params: probe.TestParams{LatencyIters: 1000},
		Reverse: &ReverseTask{Rails: mirror(rails), Ticket: "back"}}
	b := TaskMsg.Append(nil, &task)
	want, err := TaskMsg.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	d := TaskDecoder{Borrow: true}
	got, err := d.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("borrowed:\n got %+v\nwant %+v", got, want)
	}
	ticket, back := got.Ticket, got.Reverse.Ticket
	clear(b) // the buffer goes back to its pool and is written over
	if got.Src == "node-a" || got.SweepID == "sweep-1" {
		t.Fatalf("the names were copied (%q, %q): Borrow does nothing", got.SweepID, got.Src)
	}
	if ticket == "ticket" || back == "back" {
		t.Fatalf("the tickets were copied (%q, %q)", ticket, back)
	}
	if !reflect.DeepEqual(got.Rails, rails) {
		t.Fatalf("the rails pointed into the message: %+v", got.Rails)
	}
	// The next task, with the same rails section, takes the kept rails.
	task.Round = 5
	b2 := TaskMsg.Append(nil, &task)
	got2, err := d.Decode(b2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2.Rails, rails) || !reflect.DeepEqual(got2.Reverse.Rails, mirror(rails)) || got2.Src != "node-a" {
		t.Fatalf("after the first buffer was reused: %+v", got2)
	}
}

// Without Borrow a task's tickets are its own strings, never interned:
// each is unique to its task, and would only push a repeated name out of
// the table.
func TestTaskDecoderOwnsItsTickets(t *testing.T) {
	ticket := strings.Repeat("ab", 32) // a ticket's 64 hex digits: short enough to intern
	task := Task{SweepID: "sweep-1", Src: "a", Dst: "b", Ticket: ticket, Reverse: &ReverseTask{Ticket: ticket}}
	var d TaskDecoder
	got, err := d.Decode(TaskMsg.Append(nil, &task))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{got.Ticket, got.Reverse.Ticket} {
		if s != ticket || unsafe.StringData(intern([]byte(s))) == unsafe.StringData(s) {
			t.Fatalf("ticket %q was interned", s)
		}
	}
}
