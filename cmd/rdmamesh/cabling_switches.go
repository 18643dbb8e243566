package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/lldp"
)

// switchTables reads --switch-lldp's values: FILE, NAME=FILE or a
// directory of files, each one switch's `lldpcli show neighbors` output.
// The switch is NAME, else the name the file carries (`show chassis`
// saved with it), else, in a directory, the file's name without its
// extension (leaf05.json is leaf05's): operators save one file per
// switch named after it. A lone FILE that does not say whose it is is
// refused, since a guess would judge another switch's cables.
// notes are tables without a neighbour: such a switch is not read.
func switchTables(specs []string) (sws []cabling.SwitchPort, notes []string, err error) {
	from := map[string]string{} // switch -> the file its table came from
	for _, spec := range specs {
		name, path, err := splitSwitchSpec(spec)
		if err != nil {
			return nil, nil, err
		}
		files, inDir, err := switchFiles(spec, name, path)
		if err != nil {
			return nil, nil, err
		}
		for _, file := range files {
			tab, sw, err := readSwitchTable(file, name, inDir)
			if err != nil {
				return nil, nil, err
			}
			if prev, dup := from[sw]; dup {
				return nil, nil, usageErr("--switch-lldp %s: %s's table was already read from %s: give each switch once", file, sw, prev)
			}
			from[sw] = file
			if len(tab.Neighbors) == 0 {
				notes = append(notes, fmt.Sprintf("%s (%s) hears no neighbour: its cables count as unread", sw, file))
			}
			for _, n := range tab.Neighbors {
				if managementPort.MatchString(n.Interface) {
					notes = append(notes, fmt.Sprintf("%s's %s is its management port, not a fabric cable: left out", sw, n.Interface))
					continue
				}
				sws = append(sws, cabling.SwitchPort{Switch: sw, Port: n.Interface, Neighbor: cabling.Neighbor{SystemName: n.SystemName,
					PortID: n.PortID, PortIDType: n.PortIDType, PortDescription: n.PortDescription, ChassisID: n.ChassisID}})
			}
		}
	}
	return sws, notes, nil
}

// managementPort matches the out-of-band ports lldpd switches hear their
// management switch on (SONiC's and Cumulus's eth0, mgmt, Management1):
// no plan has them, and each would read as a cable to an unknown switch.
var managementPort = regexp.MustCompile(`^(?i:eth\d+|mgmt\d*|management\d*)$`)

// splitSwitchSpec reads NAME=FILE; a path that exists is a path even
// with a '=' in it.
func splitSwitchSpec(spec string) (name, path string, err error) {
	if _, statErr := os.Stat(spec); statErr == nil {
		return "", spec, nil
	}
	name, path, ok := strings.Cut(spec, "=")
	switch {
	case !ok:
		return "", spec, nil
	case name == "":
		return "", "", usageErr("--switch-lldp %q: no switch before '=': give NAME=FILE, e.g. leaf05=leaf05.json", spec)
	case path == "":
		return "", "", usageErr("--switch-lldp %q: no file after '=': give NAME=FILE, e.g. %s=%s.json", spec, name, name)
	}
	return name, path, nil
}

// switchFiles is path's file, or a directory's regular files, sorted;
// dot files (editors' and rsync's) are skipped.
func switchFiles(spec, name, path string) (files []string, inDir bool, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, usageErr("--switch-lldp %s: %v (save `lldpcli show neighbors -f json` from each switch into a file)", spec, err)
	}
	if !st.IsDir() {
		return []string{path}, false, nil
	}
	if name != "" {
		return nil, false, usageErr("--switch-lldp %s: %s is a directory of many switches' tables; NAME= names one: give NAME=FILE or the directory alone", spec, path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, false, usageErr("--switch-lldp %s: %v", spec, err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, false, usageErr("--switch-lldp %s: the directory holds no file", spec)
	}
	sort.Strings(files)
	return files, true, nil
}

// readSwitchTable parses file and settles whose table it is.
func readSwitchTable(file, name string, inDir bool) (lldp.SwitchTable, string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return lldp.SwitchTable{}, "", usageErr("--switch-lldp %s: %v", file, err)
	}
	tab, err := lldp.ParseSwitchTable(data)
	if err != nil {
		return tab, "", usageErr("--switch-lldp %s: %v", file, err)
	}
	switch {
	case name != "" && tab.Local != "" && !strings.EqualFold(name, tab.Local):
		return tab, "", usageErr("--switch-lldp %s=%s: the file is %s's table (local-chassis), not %s: drop %s= or give the right file", name, file, tab.Local, name, name)
	case name != "":
		return tab, name, nil
	case tab.Local != "":
		return tab, tab.Local, nil
	case inDir:
		return tab, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), nil
	}
	return tab, "", usageErr("--switch-lldp %s: the file does not say whose table it is (no local-chassis): give --switch-lldp NAME=%s, "+
		"or save `lldpcli show chassis -f json` into the file before the neighbours", file, file)
}

func usageErr(format string, args ...any) error {
	return &codeError{code: gate.ExitUsage, err: fmt.Errorf(format, args...)}
}
