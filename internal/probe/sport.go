package probe

// RoCEv2Sport is the kernel's rdma_get_udp_sport: the UDP source port of
// an RC QP lqpn connected to rqpn whose GRH carries flow label fl. The
// label folds to 14 bits above 0xC000; a label of 0 is derived from both
// QP numbers, so an RC connection's two directions share one port. rxe
// (5.18 and later) and mlx5 (5.10 and later) pick ports this way; the
// lab checks it against the wire (lab/clos.sh).
func RoCEv2Sport(fl, lqpn, rqpn uint32) uint16 {
	if fl == 0 {
		v := uint64(lqpn) * uint64(rqpn)
		v ^= v >> 20
		v ^= v >> 40
		fl = uint32(v) & 0xfffff
	}
	low := fl&0x3fff ^ (fl&0xfc000)>>14
	return uint16(0xc000 | low)
}
