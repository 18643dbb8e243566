package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// cellStats prints what P7 (lab/p7.sh) needs of a sweep's matrix: the
// cells, how many are not ok, and per cell on average the time spent
// measuring: latency samples x 2 x p50 (ping-pong round trips; the same
// estimate is made for ib_write_lat from t_typical) and the bandwidth
// stream's own duration.
//
//	cells NOT_OK MEAN_LAT_S MEAN_BW_S
func cellStats(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var m struct {
		Cells []struct {
			Class   string `json:"class"`
			Latency *struct {
				Samples int     `json:"samples"`
				P50     float64 `json:"p50_ns"`
			} `json:"latency"`
			Bandwidth *struct {
				Duration float64 `json:"duration_s"`
			} `json:"bandwidth"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	bad, lat, bw := 0, 0.0, 0.0
	for _, c := range m.Cells {
		if c.Class != "ok" {
			bad++
		}
		if c.Latency != nil {
			lat += float64(c.Latency.Samples) * 2 * c.Latency.P50 / 1e9
		}
		if c.Bandwidth != nil {
			bw += c.Bandwidth.Duration
		}
	}
	n := float64(max(len(m.Cells), 1))
	fmt.Printf("%d %d %.4f %.4f\n", len(m.Cells), bad, lat/n, bw/n)
	return nil
}
