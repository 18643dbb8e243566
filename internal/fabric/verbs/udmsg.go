package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A live probe and its answer are one 64-byte UD message each, big-endian:
//
//	[0,4)   magic "RMLP"
//	[4]     version (1)
//	[5]     kind: 1 probe, 2 answer
//	[8,16)  sequence number (the prober's, per target)
//	[16,24) send time, ns on the prober's monotonic clock (written by the
//	        C side right before the post; echoed)
//	[24,32) the prober port's token (random per open; echoed), so an
//	        answer meant for an earlier port on the same QPN is refused
//	[32,36) QPN of the message's sender
//	[36,40) its Q_Key
//	[40,56) its GID (what it advertised: the answer goes there)
//	[56,58) its LID (InfiniBand)
//
// The sender's own address travels in the message so the responder needs
// no lookup and no parsing of the GRH (whose layout differs between IB,
// RoCE v1 and RoCE v2 over IPv4): it answers where the probe says.
const (
	udMsgLen    = 64
	udStampOff  = 16
	udVersion   = 1
	udKindProbe = 1
	udKindReply = 2
)

var udMagic = [4]byte{'R', 'M', 'L', 'P'}

type udMsg struct {
	Kind  byte
	Seq   uint64
	Stamp int64
	Token uint64
	QPN   uint32
	QKey  uint32
	GID   [16]byte
	LID   uint16
}

func (m udMsg) encode() [udMsgLen]byte {
	var b [udMsgLen]byte
	copy(b[0:4], udMagic[:])
	b[4] = udVersion
	b[5] = m.Kind
	binary.BigEndian.PutUint64(b[8:], m.Seq)
	binary.BigEndian.PutUint64(b[16:], uint64(m.Stamp))
	binary.BigEndian.PutUint64(b[24:], m.Token)
	binary.BigEndian.PutUint32(b[32:], m.QPN)
	binary.BigEndian.PutUint32(b[36:], m.QKey)
	copy(b[40:56], m.GID[:])
	binary.BigEndian.PutUint16(b[56:], m.LID)
	return b
}

var errNotProbe = errors.New("not a live probe message")

func decodeUDMsg(b []byte) (udMsg, error) {
	if len(b) < udMsgLen || [4]byte(b[0:4]) != udMagic {
		return udMsg{}, errNotProbe
	}
	if b[4] != udVersion {
		return udMsg{}, fmt.Errorf("live probe version %d, this build speaks %d", b[4], udVersion)
	}
	m := udMsg{Kind: b[5],
		Seq:   binary.BigEndian.Uint64(b[8:]),
		Stamp: int64(binary.BigEndian.Uint64(b[16:])),
		Token: binary.BigEndian.Uint64(b[24:]),
		QPN:   binary.BigEndian.Uint32(b[32:]),
		QKey:  binary.BigEndian.Uint32(b[36:]),
		GID:   [16]byte(b[40:56]),
		LID:   binary.BigEndian.Uint16(b[56:])}
	if m.Kind != udKindProbe && m.Kind != udKindReply {
		return udMsg{}, fmt.Errorf("live probe kind %d", m.Kind)
	}
	return m, nil
}
