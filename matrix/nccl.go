package matrix

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// NCCLOptions shape the NCCL env file.
type NCCLOptions struct {
	Exclude ExcludeOptions
	// SocketIfname, when set, is written as NCCL_SOCKET_IFNAME as given
	// (e.g. "=eth0" or "^lo,docker"). The matrix does not know the
	// management network NCCL bootstraps over, so without it the line is
	// only a commented suggestion, unless UseRailNetdev is set.
	SocketIfname string
	// UseRailNetdev writes the suggested rail netdev as an active setting.
	UseRailNetdev bool
	// EnvFile writes bare KEY=value lines for docker --env-file, systemd's
	// EnvironmentFile= and Kubernetes; otherwise every line is an export,
	// so that `source FILE` in a job script reaches the job's processes
	// (a bare assignment stays a shell variable, and NCCL never sees it).
	EnvFile bool
}

// NCCLEnv is what WriteNCCLEnv writes, for callers that want the values.
type NCCLEnv struct {
	Vars     [][2]string // active KEY=value lines, in order
	Comments []string    // why a setting is missing, or a suggestion
}

// NCCL computes the NCCL settings for the usable nodes (see
// ExcludeOptions), each rule documented where it is decided:
//
//   - NCCL_IB_HCA: the devices (with port) of every usable port on a rail
//     no rail suspect blames, as "=mlx5_0:1,mlx5_1:1". The leading "="
//     asks for exact names; without it mlx5_1 also matches mlx5_10..17.
//     A device name that is healthy on one node and on a blamed rail on
//     another cannot be expressed in one job-wide value and is left out.
//   - NCCL_IB_GID_INDEX: only for RoCE (every chosen port Ethernet) and
//     only when every chosen port uses the same index. InfiniBand routes
//     by LID and needs none; non-uniform RoCE indexes are left to NCCL's
//     own selection, with a comment listing them.
//   - NCCL_SOCKET_IFNAME: Options.SocketIfname if given. Otherwise, when
//     every usable node's first chosen port has the same netdev with an
//     IP, that netdev as a suggestion (commented out unless UseRailNetdev):
//     NCCL's bootstrap usually belongs on the management network.
func (m *Matrix) NCCL(o NCCLOptions) NCCLEnv {
	var env NCCLEnv
	usable := m.Usable(o.Exclude)
	badRail := map[int]bool{}
	for _, s := range m.Suspects {
		if s.Kind == KindRail && s.Confidence >= o.Exclude.floor(m) {
			badRail[s.Rail] = true
		}
	}
	byName := make(map[string]*Node, len(m.Nodes))
	for i := range m.Nodes {
		byName[m.Nodes[i].Name] = &m.Nodes[i]
	}
	good := map[string]int{} // "dev:port" → rail, for ordering
	bad := map[string]bool{}
	var chosen []probe.Port
	firstNetdev := map[string]probe.Port{} // node → first chosen port
	for _, name := range usable {
		n := byName[name]
		for r, p := range n.Ports {
			if !portUsable(p) || !safeName(p.Device) {
				continue
			}
			id := hcaID(p)
			if badRail[r] {
				bad[id] = true
				continue
			}
			if _, seen := good[id]; !seen {
				good[id] = r
			}
			chosen = append(chosen, p)
			if _, ok := firstNetdev[name]; !ok {
				firstNetdev[name] = p
			}
		}
	}
	env.Comments = append(env.Comments, fmt.Sprintf("rdmamesh NCCL settings for %d usable node(s) of %d", len(usable), len(m.Nodes)))
	env.hca(good, bad, badRail)
	env.gidIndex(chosen)
	env.socket(o, usable, firstNetdev)
	return env
}

func (env *NCCLEnv) hca(good map[string]int, bad map[string]bool, badRail map[int]bool) {
	var ids, conflict []string
	for id := range good {
		if bad[id] {
			conflict = append(conflict, id)
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		if good[ids[a]] != good[ids[b]] {
			return good[ids[a]] < good[ids[b]]
		}
		return ids[a] < ids[b]
	})
	if len(badRail) > 0 {
		rails := make([]int, 0, len(badRail))
		for r := range badRail {
			rails = append(rails, r)
		}
		sort.Ints(rails)
		env.Comments = append(env.Comments, fmt.Sprintf("rail(s) %s left out of NCCL_IB_HCA: a rail suspect blames them", joinInts(rails)))
	}
	if len(conflict) > 0 {
		sort.Strings(conflict)
		env.Comments = append(env.Comments, fmt.Sprintf("%s left out: healthy on some nodes but on a blamed rail on others",
			strings.Join(conflict, ", ")))
	}
	if len(ids) == 0 {
		env.Comments = append(env.Comments, "no healthy HCA port: NCCL_IB_HCA not set")
		return
	}
	env.Vars = append(env.Vars, [2]string{"NCCL_IB_HCA", "=" + strings.Join(ids, ",")})
}

func (env *NCCLEnv) gidIndex(ports []probe.Port) {
	if len(ports) == 0 {
		return
	}
	indexes := map[int]bool{}
	roce := true
	for _, p := range ports {
		indexes[p.GIDIndex] = true
		roce = roce && strings.EqualFold(p.LinkLayer, "Ethernet")
	}
	list := make([]int, 0, len(indexes))
	for i := range indexes {
		list = append(list, i)
	}
	sort.Ints(list)
	switch {
	case !roce:
		env.Comments = append(env.Comments, "NCCL_IB_GID_INDEX not set: not every port is RoCE (InfiniBand routes by LID)")
	case len(list) == 1 && list[0] >= 0:
		env.Vars = append(env.Vars, [2]string{"NCCL_IB_GID_INDEX", fmt.Sprint(list[0])})
	default:
		env.Comments = append(env.Comments, fmt.Sprintf("NCCL_IB_GID_INDEX not set: the ports use GID indexes %s; "+
			"NCCL picks per port (or set NCCL_IB_ROCE_VERSION_NUM=2 with NCCL_IB_GID_INDEX=-1)", joinInts(list)))
	}
}

func (env *NCCLEnv) socket(o NCCLOptions, usable []string, first map[string]probe.Port) {
	if o.SocketIfname != "" {
		env.Vars = append(env.Vars, [2]string{"NCCL_SOCKET_IFNAME", o.SocketIfname})
		return
	}
	netdev := ""
	for _, n := range usable {
		p, ok := first[n]
		if !ok || p.Netdev == "" || p.IP == "" || !safeName(p.Netdev) || (netdev != "" && p.Netdev != netdev) {
			env.Comments = append(env.Comments, "NCCL_SOCKET_IFNAME not set: the usable nodes do not share one rail netdev with an IP")
			return
		}
		netdev = p.Netdev
	}
	if netdev == "" {
		return
	}
	if o.UseRailNetdev {
		env.Vars = append(env.Vars, [2]string{"NCCL_SOCKET_IFNAME", "=" + netdev})
		return
	}
	env.Comments = append(env.Comments, fmt.Sprintf("NCCL_SOCKET_IFNAME==%s  (suggestion: every usable node's first "+
		"healthy rail netdev; NCCL's bootstrap usually belongs on the management network)", netdev))
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// WriteNCCLEnv writes `export KEY=value` lines and # comments for a shell
// to source, or with o.EnvFile bare KEY=value lines for env-file readers.
// Values are never quoted, as docker would keep the quotes; safeName keeps
// them free of anything a shell would read differently.
func (m *Matrix) WriteNCCLEnv(w io.Writer, o NCCLOptions) error {
	env := m.NCCL(o)
	var b strings.Builder
	for _, c := range env.Comments {
		b.WriteString("# " + c + "\n")
	}
	prefix := "export "
	if o.EnvFile {
		prefix = ""
	}
	for _, v := range env.Vars {
		b.WriteString(prefix + v[0] + "=" + v[1] + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func hcaID(p probe.Port) string {
	if p.Port > 0 {
		return fmt.Sprintf("%s:%d", p.Device, p.Port)
	}
	return p.Device
}

// portUsable: discovery marked nothing wrong and the port is ACTIVE (or its
// state is unknown: an inventory that does not report it).
func portUsable(p probe.Port) bool {
	return p.Device != "" && p.UnusableWhy == "" && (p.State == "" || strings.Contains(strings.ToUpper(p.State), "ACTIVE"))
}

// safeName keeps anything a shell or docker would misread out of the file.
func safeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !plain {
			return false
		}
	}
	return s != ""
}
