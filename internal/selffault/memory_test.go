package selffault

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

func cgroupFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func TestCgroupMemoryMax(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  uint64
		where string
	}{
		{"no proc", nil, 0, ""},
		{"v2 container at the root of its namespace", map[string]string{
			"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "6442450944\n"}, 6 << 30, "/"},
		{"v2 unlimited", map[string]string{
			"proc/self/cgroup": "0::/system.slice/rdmamesh.service\n", "sys/fs/cgroup/system.slice/rdmamesh.service/memory.max": "max\n"}, 0, ""},
		{"v2 parent binds tighter than the leaf", map[string]string{
			"proc/self/cgroup":                          "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": "8589934592\n",
			"sys/fs/cgroup/kubepods/pod1/memory.max":    "4294967296\n",
			"sys/fs/cgroup/kubepods/memory.max":         "max\n",
		}, 4 << 30, "/kubepods/pod1"},
		{"v1 memory controller", map[string]string{
			"proc/self/cgroup": "12:cpu,cpuacct:/x\n4:memory:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "2147483648\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n"}, 2 << 30, "/docker/abc"},
		{"garbage reads as none", map[string]string{
			"proc/self/cgroup": "0::/a\n", "sys/fs/cgroup/a/memory.max": "lots\n"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, where := CgroupMemoryMax(cgroupFS(tc.files))
			if got != tc.want || where != tc.where {
				t.Fatalf("got %d at %q, want %d at %q", got, where, tc.want, tc.where)
			}
		})
	}
}

func TestChooseMemoryLimit(t *testing.T) {
	limited := cgroupFS(map[string]string{"proc/self/cgroup": "0::/c\n", "sys/fs/cgroup/c/memory.max": "10737418240\n"})
	free := cgroupFS(map[string]string{"proc/self/cgroup": "0::/c\n", "sys/fs/cgroup/c/memory.max": "max\n"})
	for _, tc := range []struct {
		name, setting, env string
		root               fstest.MapFS
		want               uint64
		source, err        string
	}{
		{"auto in a container", "auto", "", limited, 9663676416, "auto: 90% of cgroup /c memory limit", ""},
		{"auto with no limit anywhere", "auto", "", free, 0, "", ""},
		{"auto keeps the operator's GOMEMLIMIT", "auto", "5GiB", limited, 0, "GOMEMLIMIT=5GiB", ""},
		{"a size wins over everything", "5GiB", "3GiB", limited, 5 << 30, "k", ""},
		{"decimal units", "6GB", "", free, 6e9, "k", ""},
		{"plain bytes", "1073741824", "", free, 1 << 30, "k", ""},
		{"off", "off", "", limited, 0, "k=off", ""},
		{"a share of the container", "50%", "", limited, 5 << 30, "k (50% of cgroup /c memory limit)", ""},
		{"a share with no container", "50%", "", free, 0, "", "runs under none"},
		{"not a size", "lots", "", free, 0, "", `"lots" is not a size`},
		{"a share past 100", "120%", "", limited, 0, "", "from 1 to 100"},
		{"too small to hold anything", "10MiB", "", free, 0, "", "below 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChooseMemoryLimit("k", tc.setting, tc.env, tc.root)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Bytes != tc.want || got.Source != tc.source {
				t.Fatalf("got %+v, %v; want %d from %q", got, err, tc.want, tc.source)
			}
		})
	}
}

// Apply sets what was chosen, lifts an inherited limit only for "off", and
// leaves it for "auto" (the runtime applied GOMEMLIMIT at start).
func TestApply(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(3 << 30) // as an inherited GOMEMLIMIT would
	if got := (MemoryLimit{Source: "GOMEMLIMIT=3GiB"}).Apply(); got != 3<<30 {
		t.Fatalf("auto over GOMEMLIMIT: %d", got)
	}
	if got := (MemoryLimit{Bytes: 5 << 30}).Apply(); got != 5<<30 {
		t.Fatalf("a size: %d", got)
	}
	if got := (MemoryLimit{Off: true}).Apply(); got != math.MaxInt64 {
		t.Fatalf("off: %d", got)
	}
}
