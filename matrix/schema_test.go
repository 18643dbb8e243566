package matrix

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// SCHEMA.md must name every JSON field the package writes, nested types
// included, so the documented schema cannot silently fall behind the code.
func TestSchemaDocumentsEveryField(t *testing.T) {
	raw, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")[0]
			if tag == "-" || !f.IsExported() { // encoding/json skips both
				continue
			}
			if f.Anonymous && tag == "" {
				walk(f.Type, path)
				continue
			}
			if !strings.Contains(doc, "`"+tag+"`") {
				t.Errorf("SCHEMA.md does not document %s.%s (`%s`)", path, f.Name, tag)
			}
			walk(f.Type, path+"."+tag)
		}
	}
	walk(reflect.TypeOf(Matrix{}), "matrix")
	walk(reflect.TypeOf(Baseline{}), "baseline")
	walk(reflect.TypeOf(DiffReport{}), "diff")
	for _, col := range CSVHeader {
		if !strings.Contains(doc, "| `"+col+"` |") {
			t.Errorf("SCHEMA.md does not document CSV column %s", col)
		}
	}
	if !strings.Contains(doc, "schema_version 2") || SchemaVersion != 2 {
		t.Errorf("SCHEMA.md title and SchemaVersion (%d) disagree", SchemaVersion)
	}
}
