package matrix

import (
	"encoding/csv"
	"io"
	"strconv"
)

// CSVHeader is the first row WriteCSV writes; SCHEMA.md documents each
// column. New columns are only ever appended, so scripts that read by
// position keep working.
var CSVHeader = []string{
	"rail", "src", "dst", "src_device", "dst_device", "round",
	"class", "verdict", "p50_ns", "p99_ns", "gbps", "reason", "fix", "dst_rail",
}

// WriteCSV writes one row per cell, in Matrix.Cells order (rail, src, dst),
// then the cross-rail cells, whose dst_rail column is set.
// Figures a cell does not have are empty, not 0, so a spreadsheet's
// average is not dragged down by cells that never measured.
func (m *Matrix) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	row := make([]string, len(CSVHeader))
	if err := m.EachCell(func(_ int, c *Result) error { return cw.Write(csvRow(row, c)) }); err != nil {
		return err
	}
	for i := range m.Cross {
		if err := cw.Write(csvRow(row, &m.Cross[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func figure(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func csvRow(row []string, c *Result) []string {
	row[0] = strconv.Itoa(c.Rail)
	row[1], row[2], row[3], row[4] = c.Src, c.Dst, c.SrcDevice, c.DstDevice
	row[5] = strconv.Itoa(c.Round)
	row[6], row[7] = string(c.Class), string(c.Verdict)
	row[8], row[9], row[10] = "", "", ""
	if c.Latency != nil {
		row[8], row[9] = figure(c.Latency.P50Ns), figure(c.Latency.P99Ns)
	}
	if c.Bandwidth != nil {
		row[10] = figure(c.Bandwidth.Gbps)
	}
	row[11], row[12] = "", ""
	if c.Verdict != VerdictOK {
		row[11], row[12] = c.Reason, cellFix(c)
	}
	row[13] = ""
	if c.DstRail != nil {
		row[13] = strconv.Itoa(*c.DstRail)
	}
	return row
}
