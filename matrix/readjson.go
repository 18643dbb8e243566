package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ReadJSON sets m to the matrix JSON that r holds (what WriteJSON writes,
// or any object json.Unmarshal would accept), decoding the cells one at a
// time. json.Decoder.Decode holds a value's whole text before it decodes
// it, and a 1,024 x 8 matrix is 4.6 GB of text beside the 2.5 GB it
// decodes to.
func (m *Matrix) ReadJSON(r io.Reader) error {
	dec := json.NewDecoder(r)
	if err := wantDelim(dec, '{', "an object"); err != nil {
		return err
	}
	rest := map[string]json.RawMessage{}
	var cells, cross []Result
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("matrix JSON: %w", err)
		}
		key, _ := t.(string)
		switch {
		case strings.EqualFold(key, "cells"):
			cells, err = readResults(dec, key)
		case strings.EqualFold(key, "cross"):
			cross, err = readResults(dec, key)
		default:
			var raw json.RawMessage
			err = dec.Decode(&raw)
			rest[key] = raw
		}
		if err != nil {
			return fmt.Errorf("matrix JSON: %s: %w", key, err)
		}
	}
	if err := wantDelim(dec, '}', "the object's end"); err != nil {
		return err
	}
	b, err := json.Marshal(rest) // the small fields, decoded as one object
	if err != nil {
		return fmt.Errorf("matrix JSON: %w", err)
	}
	var head Matrix
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("matrix JSON: %w", err)
	}
	head.Cells, head.Cross = cells, cross
	*m = head
	return nil
}

// readResults decodes an array of results element by element; null gives
// nil, as json.Unmarshal does.
func readResults(dec *json.Decoder, key string) ([]Result, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if t != json.Delim('[') {
		return nil, fmt.Errorf("want an array, got %v", t)
	}
	out := []Result{}
	for dec.More() {
		var r Result
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("element %d: %w", len(out), err)
		}
		out = append(out, r)
	}
	_, err = dec.Token() // ']'
	return out, err
}

func wantDelim(dec *json.Decoder, d json.Delim, what string) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("matrix JSON: %w", err)
	}
	if t != d {
		return fmt.Errorf("matrix JSON: want %s, got %v", what, t)
	}
	return nil
}
