// Package config loads rdmamesh's settings from defaults, a YAML file,
// RDMAMESH_* environment variables and command-line flags, in rising order of
// precedence, and validates them so every bad value is reported by its key.
package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is every setting of every role; each role reads its own sections.
type Config struct {
	Log         Log         `mapstructure:"log"`
	Gossip      Gossip      `mapstructure:"gossip"`
	Worker      Worker      `mapstructure:"worker"`
	Sim         Sim         `mapstructure:"sim"`
	Coordinator Coordinator `mapstructure:"coordinator"`
	Sweep       Sweep       `mapstructure:"sweep"`
	Demo        Demo        `mapstructure:"demo"`
	Live        Live        `mapstructure:"live"`
	Auth        Auth        `mapstructure:"auth"`
	TLS         TLS         `mapstructure:"tls"`
}

// Auth holds the shared secrets. Prefer the *_file keys: values in a file
// or the environment can leak through process listings and shell history.
type Auth struct {
	Token     string `mapstructure:"token"`
	TokenFile string `mapstructure:"token_file"`
	OpenReads bool   `mapstructure:"open_reads"` // GET /api/v1 without the token
	Insecure  bool   `mapstructure:"insecure"`   // listen beyond loopback without the secrets
}

type Log struct {
	Level  string `mapstructure:"level"`  // debug | info | warn | error
	Format string `mapstructure:"format"` // text | json
}

type Gossip struct {
	Bind      string   `mapstructure:"bind"`      // host:port for memberlist
	Advertise string   `mapstructure:"advertise"` // host:port others reach us at; empty = bind
	Join      []string `mapstructure:"join"`      // seeds, host:port
	Key       string   `mapstructure:"key"`       // base64 AES key (16, 24 or 32 bytes)
	KeyFile   string   `mapstructure:"key_file"`  // file holding the base64 key
	Profile   string   `mapstructure:"profile"`   // lan | wan failure-detection timers
}

type Worker struct {
	Name         string            `mapstructure:"name"` // empty = hostname
	APIListen    string            `mapstructure:"api_listen"`
	APIAdvertise string            `mapstructure:"api_advertise"`
	Fabric       string            `mapstructure:"fabric"` // verbs | sim
	GID          string            `mapstructure:"gid"`    // GID selection policy
	Devices      []string          `mapstructure:"devices"`
	Labels       map[string]string `mapstructure:"labels"`
}

// Live is the always-on mesh: workers probe each other between sweeps at a
// low rate, the coordinator's leader plans and judges (package liveplan).
type Live struct {
	Enabled         bool          `mapstructure:"enabled"`
	RatePerHCA      float64       `mapstructure:"rate_per_hca"`      // probes/s one HCA sends, at most
	GroupRate       float64       `mapstructure:"group_rate"`        // probes/s to each peer of its switch group
	Window          time.Duration `mapstructure:"window"`            // summary and rotation window
	ProbesPerWindow int           `mapstructure:"probes_per_window"` // per rotation target and window
	Period          time.Duration `mapstructure:"period"`            // every pair within this; 0 = as the rate allows
	LinkRate        float64       `mapstructure:"link_rate"`         // probes/s of each steered link flow
}

type Sim struct {
	Preset    string   `mapstructure:"preset"`
	Seed      int64    `mapstructure:"seed"`
	Faults    []string `mapstructure:"faults"`
	TimeScale float64  `mapstructure:"time_scale"`
	// Miscabled are the demo's cables that differ from its topology
	// (topology.Miscable's specs).
	Miscabled []string `mapstructure:"miscabled"`
}

type Coordinator struct {
	Name         string        `mapstructure:"name"` // raft server ID; empty = hostname
	APIListen    string        `mapstructure:"api_listen"`
	APIAdvertise string        `mapstructure:"api_advertise"`
	DataDir      string        `mapstructure:"data_dir"` // empty = in memory
	PairTimeout  time.Duration `mapstructure:"pair_timeout"`
	Parallelism  int           `mapstructure:"parallelism"` // concurrent pairs per round, 0 = all
	KeepSweeps   int           `mapstructure:"keep_sweeps"`
	// Topology is a cabling plan (YAML or CSV) or ibnetdiscover output:
	// the fabric's switches and cables, for link localization. Empty: none.
	Topology string `mapstructure:"topology"`
	// TracePaths: after its rounds a sweep has its cells' flows traced
	// and routes them over the measured paths (a RoCE topology whose
	// switches have addrs); false leaves them to the model of ECMP.
	TracePaths bool `mapstructure:"trace_paths"`
	// TraceLossProbes: the traced flows of bad (and far outlying) cells
	// have each hop probed this many times for loss; 0 = none.
	TraceLossProbes int `mapstructure:"trace_loss_probes"`

	RaftBind        string        `mapstructure:"raft_bind"`      // empty: single voter, no raft network
	RaftAdvertise   string        `mapstructure:"raft_advertise"` // what peers dial
	RaftTimeout     time.Duration `mapstructure:"raft_timeout"`   // heartbeat and election timeout
	Peers           []string      `mapstructure:"peers"`          // static bootstrap set: name=host:port
	BootstrapExpect int           `mapstructure:"bootstrap_expect"`

	ProfilesFile string `mapstructure:"profiles_file"` // YAML threshold profiles
	Profile      string `mapstructure:"profile"`       // default profile; empty = built-in rules
	BaselineFile string `mapstructure:"baseline_file"` // a saved good sweep to compare with

	MemoryLimit string `mapstructure:"memory_limit"` // Go soft limit: auto | off | size | N% of the cgroup's
}

type Sweep struct {
	Mode         string        `mapstructure:"mode"` // quick | full
	LatencySize  int           `mapstructure:"latency_size"`
	LatencyIters int           `mapstructure:"latency_iters"`
	Warmup       int           `mapstructure:"warmup"`
	BWSize       int           `mapstructure:"bw_size"`
	BWIters      int           `mapstructure:"bw_iters"`
	TxDepth      int           `mapstructure:"tx_depth"`
	TestTimeout  time.Duration `mapstructure:"test_timeout"`
	Pattern      string        `mapstructure:"pattern"`    // all-pairs | k-batch | one-to-all | links | fabric
	BatchSize    int           `mapstructure:"batch_size"` // pairs per round for k-batch
	RailMode     string        `mapstructure:"rail_mode"`  // same | cross | all
	Budget       time.Duration `mapstructure:"budget"`     // whole sweep; 0 = none
	Retests      int           `mapstructure:"retests"`    // confirmation passes
	Connect      string        `mapstructure:"connect"`    // exchange | rdmacm
}

type Demo struct {
	Nodes  int    `mapstructure:"nodes"`
	Rails  int    `mapstructure:"rails"`
	Listen string `mapstructure:"listen"`
}

// Defaults is the embedded default configuration. Every key has a value here
// because viper only maps environment variables onto keys it already knows.
func Defaults() map[string]any {
	return map[string]any{
		"log.level":                     "info",
		"log.format":                    "text",
		"gossip.bind":                   "0.0.0.0:7946",
		"gossip.advertise":              "",
		"gossip.join":                   []string{},
		"gossip.key":                    "",
		"gossip.key_file":               "",
		"gossip.profile":                "lan",
		"auth.token":                    "",
		"auth.token_file":               "",
		"auth.open_reads":               false,
		"auth.insecure":                 false,
		"tls.cert_file":                 "",
		"tls.key_file":                  "",
		"tls.ca_file":                   "",
		"tls.client_auth":               false,
		"tls.server_name":               "",
		"coordinator.keep_sweeps":       50,
		"coordinator.raft_bind":         "",
		"coordinator.raft_advertise":    "",
		"coordinator.raft_timeout":      500 * time.Millisecond,
		"coordinator.peers":             []string{},
		"coordinator.bootstrap_expect":  1,
		"worker.name":                   "",
		"worker.api_listen":             "0.0.0.0:7947",
		"worker.api_advertise":          "",
		"worker.fabric":                 "verbs",
		"worker.gid":                    "auto",
		"worker.devices":                []string{},
		"worker.labels":                 map[string]string{},
		"sim.preset":                    "roce-2x100",
		"sim.seed":                      int64(1),
		"sim.faults":                    []string{},
		"sim.time_scale":                1.0,
		"sim.miscabled":                 []string{},
		"coordinator.name":              "",
		"coordinator.api_listen":        "0.0.0.0:8080",
		"coordinator.api_advertise":     "",
		"coordinator.data_dir":          "",
		"coordinator.pair_timeout":      10 * time.Second,
		"coordinator.parallelism":       0,
		"coordinator.topology":          "",
		"coordinator.trace_paths":       true,
		"coordinator.trace_loss_probes": 300,
		"sweep.mode":                    "full",
		"sweep.latency_size":            8,
		"sweep.latency_iters":           1000,
		"sweep.warmup":                  100,
		"sweep.bw_size":                 65536,
		"sweep.bw_iters":                200,
		"sweep.tx_depth":                64,
		"sweep.test_timeout":            5 * time.Second,
		"sweep.pattern":                 "all-pairs",
		"sweep.batch_size":              0,
		"sweep.rail_mode":               "same",
		"sweep.budget":                  time.Duration(0),
		"sweep.retests":                 2,
		"sweep.connect":                 "exchange",
		"coordinator.profiles_file":     "",
		"coordinator.profile":           "",
		"coordinator.baseline_file":     "",
		"coordinator.memory_limit":      "auto",
		"demo.nodes":                    16,
		"demo.rails":                    2,
		"demo.listen":                   "127.0.0.1:8080",
		"live.enabled":                  true,
		"live.rate_per_hca":             50.0,
		"live.group_rate":               1.0,
		"live.window":                   10 * time.Second,
		"live.probes_per_window":        5,
		"live.period":                   time.Duration(0),
		"live.link_rate":                8.0,
	}
}

// Keys lists every known key, sorted.
func Keys() []string {
	d := Defaults()
	out := make([]string, 0, len(d))
	for k := range d {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Load reads file (optional), the environment and flags. Flags are matched to
// keys by name: a flag "pair-timeout" bound via BindFlag, or a flag whose name
// with dashes turned into dots or underscores is a key.
func Load(file string, flags map[string]*pflag.Flag) (*Config, error) {
	v := viper.New()
	for k, val := range Defaults() {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("RDMAMESH")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, err)
		}
		if err := checkUnknown(v, file); err != nil {
			return nil, err
		}
	}
	for key, f := range flags {
		if err := v.BindPFlag(key, f); err != nil {
			return nil, fmt.Errorf("flag --%s: %w", f.Name, err)
		}
	}
	var c Config
	dec := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
		stringToLabels,
	))
	if err := v.Unmarshal(&c, dec, func(dc *mapstructure.DecoderConfig) { dc.ErrorUnused = true }); err != nil {
		return nil, fmt.Errorf("config: %s", explainDecode(v, err, file, flags))
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// stringToLabels reads a map from the one-string form an environment
// variable or a flag carries: RDMAMESH_WORKER_LABELS="rack=r1,leaf=l3".
func stringToLabels(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to != reflect.TypeOf(map[string]string{}) {
		return data, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(data.(string), ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("label %q: want key=value pairs separated by commas, e.g. rack=r1,leaf=l3", kv)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// checkUnknown rejects keys in the file that no setting reads: a typo must
// not silently fall back to a default.
func checkUnknown(v *viper.Viper, file string) error {
	known := map[string]bool{}
	for _, k := range Keys() {
		known[k] = true
	}
	var bad []string
	for _, k := range v.AllKeys() {
		if known[k] || strings.HasPrefix(k, "worker.labels.") {
			continue
		}
		if !v.InConfig(k) {
			continue
		}
		bad = append(bad, k)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("config file %s: unknown key %s (known keys: see `rdmamesh config keys` or configs/*.yaml)",
			file, strings.Join(bad, ", "))
	}
	return nil
}

// flatten puts mapstructure's multi-line report on one line, so a log or a
// terminal shows the key and the value together.
// explainDecode names, for every key that failed to decode, the value and
// where it came from: "'coordinator.pair_timeout' time: invalid duration"
// alone does not say that an environment variable set it, nor which.
func explainDecode(v *viper.Viper, err error, file string, flags map[string]*pflag.Flag) string {
	parts := strings.Split(flatten(err), "; ")
	for i, p := range parts {
		m := quotedKey.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		key := m[1]
		what := strings.TrimSpace(strings.TrimPrefix(p, m[0]))
		parts[i] = fmt.Sprintf("key %s = %q from %s: %s%s", key, fmt.Sprint(v.Get(key)), source(key, file, flags), what, wantHint(what))
	}
	return strings.Join(parts, "; ")
}

var quotedKey = regexp.MustCompile(`^'([a-z0-9_.]+)'`)

// source says where viper took key's value from, in its order of
// precedence: flag, environment, file.
func source(key, file string, flags map[string]*pflag.Flag) string {
	if f, ok := flags[key]; ok && f.Changed {
		return "flag --" + f.Name
	}
	env := "RDMAMESH_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
	if _, ok := os.LookupEnv(env); ok {
		return "environment variable " + env
	}
	if file != "" {
		return "config file " + file
	}
	return "the defaults"
}

func wantHint(what string) string {
	switch {
	case strings.Contains(what, "duration"):
		return " (want a duration such as 500ms, 10s or 2m)"
	case strings.Contains(what, "ParseInt"), strings.Contains(what, "ParseUint"):
		return " (want a whole number)"
	case strings.Contains(what, "ParseBool"):
		return " (want true or false)"
	case strings.Contains(what, "ParseFloat"):
		return " (want a number)"
	}
	return ""
}

func flatten(err error) string {
	msg := strings.Replace(err.Error(), "decoding failed due to the following error(s):", "", 1)
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*")); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// FieldError names the key a validation failed on.
type FieldError struct {
	Key string
	Msg string
	Err error // the cause, when there is one (a missing file)
}

func (e *FieldError) Error() string { return fmt.Sprintf("config key %s: %s", e.Key, e.Msg) }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks values that decode fine but make no sense.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, a...)})
	}
	oneOf := func(key, val string, allowed ...string) {
		for _, a := range allowed {
			if val == a {
				return
			}
		}
		bad(key, "%q is not one of %s", val, strings.Join(allowed, ", "))
	}
	oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf("log.format", c.Log.Format, "text", "json")
	oneOf("worker.fabric", c.Worker.Fabric, "verbs", "sim")
	oneOf("sweep.mode", c.Sweep.Mode, "quick", "full")
	oneOf("sweep.pattern", c.Sweep.Pattern, "all-pairs", "k-batch", "one-to-all", "links", "fabric")
	oneOf("sweep.rail_mode", c.Sweep.RailMode, "same", "cross", "all")
	oneOf("sweep.connect", c.Sweep.Connect, "exchange", "rdmacm")
	if c.Sweep.Retests < 0 || c.Sweep.Retests > 5 {
		bad("sweep.retests", "%d out of range: use 0 (no confirmation) to 5 passes", c.Sweep.Retests)
	}
	if n := c.Coordinator.TraceLossProbes; n < 0 || n > 5000 {
		bad("coordinator.trace_loss_probes", "%d out of range: use 0 (no hop loss) to 5000 probes a hop", n)
	}
	if c.Sweep.Budget < 0 {
		bad("sweep.budget", "%s must not be negative (0 = no budget)", c.Sweep.Budget)
	}
	if c.Sweep.Pattern == "k-batch" && c.Sweep.BatchSize < 1 {
		bad("sweep.batch_size", "%d: sweep.pattern k-batch needs at least 1 pair per round", c.Sweep.BatchSize)
	}
	if c.Sweep.Pattern == "one-to-all" {
		bad("sweep.pattern", "one-to-all needs a root node per sweep: pass it in the request (gate --pattern one-to-all --root NODE), not as the default")
	}
	for key, addr := range map[string]string{
		"gossip.bind": c.Gossip.Bind, "worker.api_listen": c.Worker.APIListen,
		"coordinator.api_listen": c.Coordinator.APIListen, "demo.listen": c.Demo.Listen,
	} {
		if err := checkHostPort(addr, false); err != nil {
			bad(key, "%v", err)
		}
	}
	for key, addr := range map[string]string{
		"gossip.advertise": c.Gossip.Advertise, "worker.api_advertise": c.Worker.APIAdvertise,
		"coordinator.api_advertise": c.Coordinator.APIAdvertise,
	} {
		if addr == "" {
			continue
		}
		if err := checkHostPort(addr, true); err != nil {
			bad(key, "%v", err)
		}
	}
	for i, j := range c.Gossip.Join {
		if err := checkHostPort(j, true); err != nil {
			bad(fmt.Sprintf("gossip.join[%d]", i), "%v", err)
		}
	}
	positive := map[string]int{
		"sweep.latency_size": c.Sweep.LatencySize, "sweep.latency_iters": c.Sweep.LatencyIters,
		"sweep.tx_depth": c.Sweep.TxDepth, "sweep.bw_iters": c.Sweep.BWIters,
	}
	for key, n := range positive {
		if n < 1 {
			bad(key, "%d must be at least 1", n)
		}
	}
	for key, n := range map[string]int{"sweep.warmup": c.Sweep.Warmup, "sweep.bw_size": c.Sweep.BWSize,
		"coordinator.parallelism": c.Coordinator.Parallelism} {
		if n < 0 {
			bad(key, "%d must not be negative", n)
		}
	}
	if c.Coordinator.RaftBind != "" {
		if err := checkHostPort(c.Coordinator.RaftBind, false); err != nil {
			bad("coordinator.raft_bind", "%v", err)
		}
	}
	if c.Coordinator.RaftAdvertise != "" {
		if err := checkHostPort(c.Coordinator.RaftAdvertise, true); err != nil {
			bad("coordinator.raft_advertise", "%v", err)
		}
	}
	for i, p := range c.Coordinator.Peers {
		name, addr, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			bad(fmt.Sprintf("coordinator.peers[%d]", i), "%q: want name=host:port", p)
			continue
		}
		if err := checkHostPort(addr, true); err != nil {
			bad(fmt.Sprintf("coordinator.peers[%d]", i), "%v", err)
		}
	}
	if len(c.Coordinator.Peers) > 0 && c.Coordinator.RaftBind == "" {
		bad("coordinator.raft_bind", "must be set when coordinator.peers is")
	}
	if c.Coordinator.BootstrapExpect < 1 || c.Coordinator.BootstrapExpect > 7 {
		bad("coordinator.bootstrap_expect", "%d must be 1..7 (odd: 1, 3 or 5 coordinators)", c.Coordinator.BootstrapExpect)
	} else if c.Coordinator.BootstrapExpect > 1 && c.Coordinator.RaftBind == "" {
		bad("coordinator.raft_bind", "must be set when coordinator.bootstrap_expect > 1")
	}
	if c.Coordinator.KeepSweeps < 1 {
		bad("coordinator.keep_sweeps", "%d must be at least 1", c.Coordinator.KeepSweeps)
	}
	if c.Gossip.Key != "" && c.Gossip.KeyFile != "" {
		bad("gossip.key", "set gossip.key or gossip.key_file, not both")
	}
	if c.Auth.Token != "" && c.Auth.TokenFile != "" {
		bad("auth.token", "set auth.token or auth.token_file, not both")
	}
	c.TLS.validate(bad)
	if t := c.Coordinator.RaftTimeout; t < 50*time.Millisecond || t > 30*time.Second {
		bad("coordinator.raft_timeout", "%s out of range: use 50ms to 30s (500ms suits a LAN; raise it on congested or WAN links)", t)
	}
	if p := c.Gossip.Profile; p != "lan" && p != "wan" {
		bad("gossip.profile", "%q: use lan (failure detected in ~5 s) or wan (tolerates hosts that stall for seconds: VMs, oversubscribed or busy-polling hosts)", p)
	}
	if c.Coordinator.PairTimeout <= 0 {
		bad("coordinator.pair_timeout", "%s must be positive, e.g. 10s", c.Coordinator.PairTimeout)
	}
	if c.Sweep.TestTimeout <= 0 {
		bad("sweep.test_timeout", "%s must be positive, e.g. 5s", c.Sweep.TestTimeout)
	}
	if c.Sim.TimeScale < 0 || c.Sim.TimeScale > 100 {
		bad("sim.time_scale", "%g must be between 0 (instant) and 100", c.Sim.TimeScale)
	}
	if c.Demo.Nodes < 2 || c.Demo.Nodes > 4096 {
		bad("demo.nodes", "%d must be between 2 and 4096", c.Demo.Nodes)
	}
	if c.Demo.Rails < 1 || c.Demo.Rails > 8 {
		bad("demo.rails", "%d must be between 1 and 8", c.Demo.Rails)
	}
	c.Live.validate(bad)
	return errors.Join(errs...)
}

// Fields lists the mapstructure keys of Config, for the docs and tests.
func Fields() []string {
	var out []string
	walk(reflect.TypeOf(Config{}), "", &out)
	sort.Strings(out)
	return out
}

func walk(t reflect.Type, prefix string, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := prefix + f.Tag.Get("mapstructure")
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			walk(f.Type, key+".", out)
			continue
		}
		*out = append(*out, key)
	}
}

// Hostname is the default node / server name.
func Hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	return "RDMAMESH_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func (l *Live) validate(bad func(key, format string, args ...any)) {
	if !(l.RatePerHCA > 0) || l.RatePerHCA > 10000 {
		bad("live.rate_per_hca", "%g must be above 0 and at most 10000 probes per second (default 50)", l.RatePerHCA)
	}
	if !(l.GroupRate > 0) || l.GroupRate > l.RatePerHCA {
		bad("live.group_rate", "%g must be above 0 and at most live.rate_per_hca (default 1)", l.GroupRate)
	}
	if l.Window < time.Second || l.Window > 10*time.Minute {
		bad("live.window", "%s out of range: use 1s to 10m (default 10s)", l.Window)
	}
	if l.ProbesPerWindow < 1 || l.ProbesPerWindow > 10000 {
		bad("live.probes_per_window", "%d must be 1..10000 (default 5)", l.ProbesPerWindow)
	}
	if !(l.LinkRate >= 1) || l.LinkRate > l.RatePerHCA {
		bad("live.link_rate", "%g must be at least 1 and at most live.rate_per_hca probes per second (default 8)", l.LinkRate)
	}
	if l.Period < 0 || (l.Period > 0 && l.Period < l.Window) {
		bad("live.period", "%s must be 0 (as the rate allows) or at least live.window", l.Period)
	}
}
