package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"
)

// GIDRow is one line of the show_gids-style table.
type GIDRow struct {
	Device string `json:"dev"`
	Port   int    `json:"port"`
	Index  int    `json:"index"`
	GID    string `json:"gid"` // sysfs spelling: eight 4-digit groups
	IPv4   string `json:"ipv4,omitempty"`
	Ver    string `json:"ver"` // v1 | v2
	Netdev string `json:"ndev,omitempty"`
	// Unusable says why the entry cannot carry traffic from this namespace
	// (no netdev here, another namespace's address); empty when it can.
	Unusable string `json:"unusable,omitempty"`
}

// GIDTable lists every used GID entry in rail order, the data behind
// WriteGIDTable and its JSON form.
func (h *Host) GIDTable() []GIDRow {
	rows := []GIDRow{}
	for _, r := range h.rails() {
		for _, g := range r.port.GIDs {
			row := GIDRow{Device: r.dev.Name, Port: r.port.Num, Index: g.Index,
				GID: sysfsGID(g.Addr), Ver: ShortType(g.Type), Netdev: g.Netdev}
			if g.Addr.Is4In6() {
				row.IPv4 = g.Addr.Unmap().String()
			}
			if r.port.LinkLayer == LayerEth {
				row.Unusable = h.view(g).why
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// WriteGIDTable prints the table the way Mellanox's show_gids does, so
// people can diff it against what they know.
func (h *Host) WriteGIDTable(w io.Writer) error {
	ew := &errWriter{w: w}
	writeGIDRows(ew, h.GIDTable())
	return ew.err
}

func writeGIDRows(w io.Writer, rows []GIDRow) {
	t := newTable(w)
	t.row("DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV")
	t.row("---", "----", "-----", "---", "------------", "---", "---")
	for _, r := range rows {
		t.row(r.Device, strconv.Itoa(r.Port), strconv.Itoa(r.Index), r.GID, r.IPv4, r.Ver, r.Netdev)
	}
	t.flush()
	fmt.Fprintf(w, "n_gids_found=%d\n", len(rows))
}

// table is a tabwriter whose lines lose their trailing blanks, so an empty
// last cell leaves no whitespace for editors to strip from golden files.
type table struct {
	tw  *tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 8, 2, ' ', 0)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

func (t *table) flush() {
	t.tw.Flush()
	for line := range strings.Lines(t.buf.String()) {
		// out is a renderer's errWriter: it keeps the first error for the
		// renderer to return, as it does for their fmt.Fprint calls.
		_, _ = io.WriteString(t.out, strings.TrimRight(line, " \n")+"\n")
	}
	t.buf.Reset()
}

// WriteGIDTableJSON is the --json form of WriteGIDTable.
func (h *Host) WriteGIDTableJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(h.GIDTable())
}

func sysfsGID(a netip.Addr) string {
	b := a.As16()
	return fmt.Sprintf("%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
}
