package deploytest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// keygenVolume is the compose volume a one-shot keygen service fills, and
// what the real keygen writes there.
type keygenVolume struct {
	service, volume string
	written         map[string]string // file name → content
}

// composeSecrets finds the keygen service and runs the built binary's
// keygen the way it would, so the services are checked against real files.
func composeSecrets(t *testing.T, p *types.Project) *keygenVolume {
	t.Helper()
	for name, s := range p.Services {
		if len(s.Command) == 0 || s.Command[0] != "keygen" {
			continue
		}
		args := argValues(s.Command)
		if _, ok := args["if-missing"]; !ok {
			t.Errorf("%s: without --if-missing the second `docker compose up` fails and nothing starts", name)
		}
		k := &keygenVolume{service: name, written: map[string]string{}}
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeVolume && v.Target == args["dir"] && !v.ReadOnly {
				k.volume = v.Source
			}
		}
		if k.volume == "" {
			t.Fatalf("%s: --dir %s is not a writable named volume the other services can mount", name, args["dir"])
		}
		dir := t.TempDir()
		if out, err := exec.Command(cli(t).Path, "keygen", "--dir", dir).CombinedOutput(); err != nil {
			t.Fatalf("rdmamesh keygen: %v\n%s", err, out)
		}
		for _, f := range []string{config.TokenFileName, config.KeyFileName} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			k.written[f] = string(b)
		}
		return k
	}
	t.Fatal("no keygen service: the coordinators and workers listen on the compose network and need a token and gossip key")
	return nil
}

// files are the secrets service s sees; a service that mounts them must
// start after keygen has finished, and must not be able to change them.
func (k *keygenVolume) files(t *testing.T, s types.ServiceConfig) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range s.Volumes {
		if v.Source != k.volume || s.Name == k.service {
			continue
		}
		if !v.ReadOnly {
			t.Errorf("%s mounts %s writable; only %s writes it", s.Name, k.volume, k.service)
		}
		if d, ok := s.DependsOn[k.service]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
			if !slices.Contains(s.Profiles, "tools") { // run by hand, after `up`
				t.Errorf("%s reads %s before %s may have written it: depends_on %s: {condition: %s}",
					s.Name, k.volume, k.service, k.service, types.ServiceConditionCompletedSuccessfully)
			}
		}
		for name, body := range k.written {
			out[path.Join(v.Target, name)] = body
		}
	}
	return out
}
