package sweep

// LiteCell is a plain cell of a round: a same-rail direction that measured
// ok with latency alone (no error, no bandwidth), its figures as the 16-bit
// codes the worker sent. Nearly every cell of a healthy quick sweep is one.
// As a matrix.Cell it would be 160 bytes, plus its 64 bytes of figures,
// written by the dispatch and read again by the round encoder, which would
// then look its two nodes up by name: at 1,024 x 8 that path is a sixth of
// the leader's CPU in a round. Its Src and Dst are positions in the sweep's
// nodes (RoundResult.Nodes), its round the RoundResult's, its devices the
// nodes' ports on Rail, its class ok.
type LiteCell struct {
	Src, Dst int32
	Rail     uint16
	Flow     uint16 // matrix.Cell.Flow, in Rail's padding: still 32 bytes
	Samples  uint32
	Codes    [7]uint16
	BackFlow uint16 // matrix.Cell.BackFlow, in the tail's padding: still 32 bytes
}
