//go:build e2e

package e2e

import (
	"bytes"
	"image/png"
	"testing"
)

// Reading what a person would see: screenshots decoded in Go, pixels of a
// status colour counted and located inside the heatmap canvas, so a test
// fails when a fault is in the data but not visible on the screen.

type rgb struct{ R, G, B uint8 }

// The palette's status colours (web/ui/js/palette.js).
var (
	failedRGB = rgb{0xD5, 0x5E, 0x00} // vermillion
	okRGB     = rgb{0x00, 0x72, 0xB2} // blue
)

// colourTolerance absorbs colour management and rounding in the
// screenshot path; the palette's colours are far further apart than this.
const colourTolerance = 10

// mask marks the pixels of one colour in a rectangle of a screenshot.
type mask struct {
	w, h int
	on   []bool
	n    int // pixels on
}

func (m *mask) at(x, y int) bool { return m.on[y*m.w+x] }

// colourMask decodes shot and marks the pixels near c inside r (CSS px;
// the browser runs at device pixel ratio 1).
func colourMask(t *testing.T, shot []byte, r rect, c rgb) *mask {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	b := img.Bounds()
	x0, y0 := max(b.Min.X, int(r.X+0.5)), max(b.Min.Y, int(r.Y+0.5))
	x1, y1 := min(b.Max.X, int(r.X+r.W+0.5)), min(b.Max.Y, int(r.Y+r.H+0.5))
	if x1-x0 < 10 || y1-y0 < 10 {
		t.Fatalf("the canvas %+v is not on the %v screenshot", r, b)
	}
	m := &mask{w: x1 - x0, h: y1 - y0}
	m.on = make([]bool, m.w*m.h)
	near := func(a uint32, b uint8) bool {
		d := int(a>>8) - int(b)
		return d <= colourTolerance && d >= -colourTolerance
	}
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr, c.R) && near(pg, c.G) && near(pb, c.B) {
				m.on[(y-y0)*m.w+(x-x0)] = true
				m.n++
			}
		}
	}
	return m
}

// band is a run of consecutive rows (or columns) of a mask.
type band struct{ start, width int }

// lines returns the runs of rows (byRow) or columns whose pixels are on
// for at least minLen pixels: a horizontal or vertical line of that colour
// and its thickness.
func (m *mask) lines(byRow bool, minLen int) []band {
	outer, inner := m.h, m.w
	if !byRow {
		outer, inner = m.w, m.h
	}
	var out []band
	run := band{start: -1}
	for o := 0; o <= outer; o++ {
		full := false
		if o < outer {
			k := 0
			for i := 0; i < inner; i++ {
				x, y := i, o
				if !byRow {
					x, y = o, i
				}
				if m.at(x, y) {
					k++
				}
			}
			full = k >= minLen
		}
		switch {
		case full && run.start < 0:
			run = band{start: o, width: 1}
		case full:
			run.width++
		case run.start >= 0:
			out = append(out, run)
			run = band{start: -1}
		}
	}
	return out
}

// box is the bounding box of the mask's pixels and the share of it they
// fill: a solid block has a share near 1.
func (m *mask) box() (x0, y0, x1, y1 int, fill float64) {
	x0, y0, x1, y1 = m.w, m.h, -1, -1
	for y := 0; y < m.h; y++ {
		for x := 0; x < m.w; x++ {
			if m.at(x, y) {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	if x1 < 0 {
		return 0, 0, 0, 0, 0
	}
	return x0, y0, x1 + 1, y1 + 1, float64(m.n) / float64((x1+1-x0)*(y1+1-y0))
}
