package wire

// EncodedRails is a list of rail results in the form a task result
// carries them, encoded once to be spliced into many answers
// (AppendTaskResult).
type EncodedRails struct {
	n     int
	isNil bool
	b     []byte
	c     *Codec[TaskResult]
}

// EncodeRailResults encodes rails as ResultCodec(codes) writes them.
func EncodeRailResults(rails []RailResult, codes bool) EncodedRails {
	var w writer
	put := (*writer).railResult
	if codes {
		put = (*writer).railResultQ
	}
	for i := range rails {
		put(&w, &rails[i])
	}
	return EncodedRails{n: len(rails), isNil: rails == nil, b: w, c: ResultCodec(codes)}
}

// AppendTaskResult is TaskResultMsg.Append(b, res) for a res whose rails
// are fwd and, when it has a reverse half, back: res's own rail lists are
// not read. A host that answers many tasks with the same rails and
// figures (the harness's stand-in hosts) encodes them once; a million
// answers a sweep re-encoding the same 16 rails was most of what the
// stand-ins spent. The answer is in the version fwd was encoded for;
// back, when written, must have been encoded for the same one.
func AppendTaskResult(b []byte, res *TaskResult, fwd, back EncodedRails) []byte {
	if res.Reverse != nil && back.c != fwd.c {
		panic("wire: AppendTaskResult with halves encoded for different versions")
	}
	w := writer(append(b, fwd.c.version))
	putResultHead(&w, res)
	if res.Reverse != nil {
		w.count(back.n, back.isNil)
	}
	w.count(fwd.n, fwd.isNil)
	w = append(w, fwd.b...)
	if res.Reverse != nil {
		w = append(w, back.b...)
	}
	return w
}
