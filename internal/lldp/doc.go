// Package lldp learns which switch port a host's network interface is
// cabled to from LLDP (IEEE 802.1AB), the announcements switches send
// about every 30 s: chassis ID, port ID, time to live, and usually the
// switch's name and the port's description.
//
// Three ways in, one answer (Neighbor):
//
//   - Parse and ParseFrame read an LLDPDU or a whole Ethernet frame;
//     malformed input is an error naming the byte, never a panic.
//   - Open listens on one interface with an AF_PACKET socket (Linux, needs
//     CAP_NET_RAW); Watcher keeps a listener per interface in the
//     background and the newest neighbour each one heard, expiring it
//     when its TTL runs out.
//   - LLDPD asks a running lldpd through `lldpcli -f json0 show neighbors`.
//
// Absences are errors that say why (NotHeardError, ExpiredError,
// AmbiguousError, PermissionError, ErrNotRunning): a caller reports them
// as "unknown" with the reason and never guesses a neighbour.
package lldp
