// Command docgen writes the configuration reference from internal/config:
// every key with its type, default, environment variable, flags and meaning.
//
//	go run ./internal/config/docgen > docs/configuration.md
//
// Its test fails when docs/configuration.md differs from this output, when a
// key has no description here, or when a flag named here is not a real flag
// of the binary, so the reference cannot drift from the code.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/config/docgen/keyflags"
)

func main() {
	var b bytes.Buffer
	if err := generate(&b); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	// Written only when complete, so a failure never truncates the doc
	// that a shell redirect is about to replace.
	if _, err := os.Stdout.Write(b.Bytes()); err != nil {
		os.Exit(1)
	}
}

// field is one key as the Config struct declares it.
type field struct {
	key string
	typ reflect.Type
}

// sections walks config.Config in declaration order, which groups related
// keys better than the alphabetical config.Keys().
func sections() ([]string, map[string][]field) {
	var order []string
	by := map[string][]field{}
	ct := reflect.TypeOf(config.Config{})
	for i := 0; i < ct.NumField(); i++ {
		sec := ct.Field(i)
		name := sec.Tag.Get("mapstructure")
		order = append(order, name)
		for j := 0; j < sec.Type.NumField(); j++ {
			f := sec.Type.Field(j)
			by[name] = append(by[name], field{key: name + "." + f.Tag.Get("mapstructure"), typ: f.Type})
		}
	}
	return order, by
}

func generate(w io.Writer) error {
	order, by := sections()
	defaults := config.Defaults()
	var declared []string
	for _, sec := range order {
		for _, f := range by[sec] {
			declared = append(declared, f.key)
		}
	}
	if noDefault, noField := diff(declared, config.Keys()); len(noDefault)+len(noField) > 0 {
		return fmt.Errorf("config.Config and config.Defaults() disagree: fields without a default %v, defaults without a field %v",
			noDefault, noField)
	}
	var missing []string
	for _, k := range declared {
		if descriptions[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no description for %s: add it to internal/config/docgen/keys.go", strings.Join(missing, ", "))
	}

	var b strings.Builder
	b.WriteString(header)
	for _, sec := range order {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", sec, sectionIntro[sec])
		b.WriteString("| key | type | default | environment | flags | meaning |\n|---|---|---|---|---|---|\n")
		for _, f := range by[sec] {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", f.key, typeName(f.typ),
				defaultText(defaults[f.key]), envText(f), flagText(f.key), descriptions[f.key])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const header = `# Configuration reference

<!-- Generated from internal/config by ` + "`go run ./internal/config/docgen > docs/configuration.md`" + `.
     Do not edit by hand: internal/config/docgen's test fails when this file and the code differ. -->

Every setting has a default and can be set in three places; the first one that sets it wins:

1. a **flag** of the command (` + "`rdmamesh worker --fabric sim`" + `),
2. an **environment variable** ` + "`RDMAMESH_<SECTION>_<KEY>`" + ` (` + "`RDMAMESH_WORKER_FABRIC=sim`" + `),
3. the **YAML file** given with ` + "`--config`" + ` (sections and keys as below; examples in ` + "`configs/`" + `).

An unknown key in the file or a bad value stops the program with an error naming the key.
Lists take comma-separated values in the environment (` + "`RDMAMESH_GOSSIP_JOIN=a:7946,b:7946`" + `) and repeat
or comma-separate on the command line (` + "`--join a:7946 --join b:7946`" + `). Durations use Go's syntax
(` + "`500ms`, `10s`, `1m30s`" + `). Maps can only be set in the file. ` + "`rdmamesh config keys`" + ` prints the same
keys, defaults and variables from the binary you run.
`

// diff returns what only a has and what only b has.
func diff(a, b []string) (onlyA, onlyB []string) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "duration"
	case t.Kind() == reflect.Slice:
		return "list"
	case t.Kind() == reflect.Map:
		return "map"
	case t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "integer"
	}
	return t.Kind().String()
}

func defaultText(v any) string {
	switch d := v.(type) {
	case string:
		if d == "" {
			return "*(empty)*"
		}
		return "`" + d + "`"
	case []string:
		if len(d) == 0 {
			return "*(none)*"
		}
		return "`" + strings.Join(d, ",") + "`"
	case map[string]string:
		if len(d) == 0 {
			return "*(none)*"
		}
	case time.Duration:
		return "`" + d.String() + "`"
	}
	return fmt.Sprintf("`%v`", v)
}

// envText is the variable, except for maps: viper hands the variable's text
// to the decoder as a string, which a map field rejects.
func envText(f field) string {
	if f.typ.Kind() == reflect.Map {
		return "*(file only)*"
	}
	return "`" + config.EnvName(f.key) + "`"
}

func flagText(key string) string {
	fl := keyflags.Flags[key]
	if len(fl) == 0 {
		return "–"
	}
	var parts []string
	for _, f := range fl {
		parts = append(parts, "`"+f.String()+"`")
	}
	return strings.Join(parts, ", ")
}
