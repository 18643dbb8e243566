// Package keyflags records which command reads which config key, and
// through which flag. cmd/rdmamesh binds flags to keys inside its commands
// (loadConfig's binds) and a main package cannot be imported, so the table
// lives here, shared by the configuration reference generator and the
// deploy tests; docgen's test checks it against the built binary's --help
// in both directions.
package keyflags

import "strings"

// Flag is one command-line flag that sets a key. Cmd "" is a persistent
// flag of the root command, taken by every subcommand.
type Flag struct {
	Cmd  string
	Name string
}

func (f Flag) String() string {
	if f.Cmd == "" {
		return "--" + f.Name
	}
	return f.Cmd + " --" + f.Name
}

// Flags says which flags set which key.
var Flags = map[string][]Flag{
	"log.level":                    {{"", "log-level"}},
	"log.format":                   {{"", "log-format"}},
	"gossip.bind":                  {{"worker", "gossip-bind"}, {"coordinator", "gossip-bind"}},
	"gossip.advertise":             {{"worker", "gossip-advertise"}, {"coordinator", "gossip-advertise"}},
	"gossip.join":                  {{"worker", "join"}, {"coordinator", "join"}},
	"worker.name":                  {{"worker", "name"}},
	"worker.api_listen":            {{"worker", "api-listen"}},
	"worker.api_advertise":         {{"worker", "api-advertise"}},
	"worker.fabric":                {{"worker", "fabric"}},
	"worker.gid":                   {{"worker", "gid"}},
	"worker.devices":               {{"worker", "device"}},
	"sim.preset":                   {{"worker", "sim-preset"}},
	"sim.seed":                     {{"worker", "sim-seed"}, {"demo", "seed"}},
	"sim.faults":                   {{"worker", "sim-fault"}, {"demo", "fault"}},
	"sim.time_scale":               {{"worker", "sim-time-scale"}, {"demo", "time-scale"}},
	"sim.miscabled":                {{"demo", "miscable"}},
	"coordinator.name":             {{"coordinator", "name"}},
	"coordinator.api_listen":       {{"coordinator", "api-listen"}},
	"coordinator.api_advertise":    {{"coordinator", "api-advertise"}},
	"coordinator.raft_bind":        {{"coordinator", "raft-bind"}},
	"coordinator.raft_advertise":   {{"coordinator", "raft-advertise"}},
	"coordinator.peers":            {{"coordinator", "peer"}},
	"coordinator.bootstrap_expect": {{"coordinator", "bootstrap-expect"}},
	"auth.token_file":              {{"worker", "token-file"}, {"coordinator", "token-file"}},
	"gossip.key_file":              {{"worker", "gossip-key-file"}, {"coordinator", "gossip-key-file"}},
	"auth.insecure":                {{"worker", "insecure"}, {"coordinator", "insecure"}},
	"coordinator.data_dir":         {{"coordinator", "data-dir"}},
	"coordinator.pair_timeout":     {{"coordinator", "pair-timeout"}, {"demo", "pair-timeout"}},
	"coordinator.topology":         {{"coordinator", "topology"}, {"demo", "topology"}},
	"coordinator.memory_limit":     {{"coordinator", "memory-limit"}},
	"sweep.mode":                   {{"coordinator", "mode"}, {"demo", "mode"}},
	"sweep.pattern":                {{"demo", "pattern"}},
	"demo.nodes":                   {{"demo", "nodes"}},
	"demo.rails":                   {{"demo", "rails"}},
	"demo.listen":                  {{"demo", "listen"}},
	"tls.cert_file":                {{"worker", "tls-cert-file"}, {"coordinator", "tls-cert-file"}},
	"tls.key_file":                 {{"worker", "tls-key-file"}, {"coordinator", "tls-key-file"}},
	"tls.ca_file":                  {{"worker", "tls-ca-file"}, {"coordinator", "tls-ca-file"}},
	"tls.client_auth":              {{"worker", "tls-client-auth"}, {"coordinator", "tls-client-auth"}},
}

// NotKeys are flags of the config-reading commands that set no key: the
// test requires every other flag of those commands to appear in Flags.
var NotKeys = map[string][]string{
	"":            {"help", "config"},
	"worker":      {"help"},
	"coordinator": {"help"},
	"demo":        {"help", "once", "json", "junit", "preset", "inject", "fat-tree"},
}

// ConfigCommands are the commands that load the configuration; a
// persistent flag (Cmd "") reaches all of them.
var ConfigCommands = []string{"worker", "coordinator", "demo"}

// Unflagged lists keys a command reads from the file or the environment
// although it has no flag for them. A trailing ".*" covers a section.
var Unflagged = map[string][]string{
	"worker.labels":           {"worker"},
	"coordinator.parallelism": {"coordinator"},
	"coordinator.keep_sweeps": {"coordinator"},
	"auth.open_reads":         {"coordinator"},
	"sweep.*":                 {"coordinator", "demo"},
	"tls.server_name":         {"worker", "coordinator"},
}

// Readers returns the commands that read key.
func Readers(key string) []string {
	var out []string
	add := func(cmd string) {
		for _, c := range out {
			if c == cmd {
				return
			}
		}
		out = append(out, cmd)
	}
	for _, f := range Flags[key] {
		if f.Cmd == "" {
			for _, c := range ConfigCommands {
				add(c)
			}
			continue
		}
		add(f.Cmd)
	}
	for pattern, cmds := range Unflagged {
		sec, isSection := strings.CutSuffix(pattern, ".*")
		if pattern == key || (isSection && strings.HasPrefix(key, sec+".")) {
			for _, c := range cmds {
				add(c)
			}
		}
	}
	return out
}
