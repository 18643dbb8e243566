package deploytest

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Values the downward API would give, so references to them resolve.
var downward = map[string]string{
	"status.podIP":  "10.244.1.7",
	"spec.nodeName": "gpu-node-07",
	"metadata.name": "rdmamesh-coordinator-0",
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// podProcess turns a container into the process it would run: its args,
// its environment with $(VAR) references expanded the way the kubelet does
// (only variables defined earlier in the list), and the files its
// ConfigMap and Secret volumes provide.
// Mounts of claims (a StatefulSet's volumeClaimTemplates) are named in
// claims, since they are not among the pod's volumes.
func podProcess(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container,
	configMaps map[string]*corev1.ConfigMap, secrets map[string]*corev1.Secret, claims ...string) process {
	t.Helper()
	if len(c.Command) > 0 {
		t.Errorf("%s: command %v overrides the image's rdmamesh entrypoint; use args", where, c.Command)
	}
	p := process{where: where, args: c.Args, env: map[string]string{}, files: map[string]string{}}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v, ok := downward[e.ValueFrom.FieldRef.FieldPath]
			if !ok {
				t.Errorf("%s: env %s: no test value for fieldRef %s", where, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			p.env[e.Name] = v
		case e.ValueFrom != nil:
			t.Errorf("%s: env %s: only fieldRef sources are expected", where, e.Name)
		default:
			p.env[e.Name] = varRef.ReplaceAllStringFunc(e.Value, func(ref string) string {
				name := varRef.FindStringSubmatch(ref)[1]
				v, ok := p.env[name]
				if !ok {
					// The kubelet leaves it as the literal text "$(NAME)".
					t.Errorf("%s: env %s uses $(%s), which is not defined before it", where, e.Name, name)
				}
				return v
			})
		}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok && !slices.Contains(claims, m.Name) {
			t.Errorf("%s: mount %s names no volume", where, m.Name)
			continue
		}
		var data map[string]string
		switch {
		case v.ConfigMap != nil:
			cm, ok := configMaps[v.ConfigMap.Name]
			if !ok {
				t.Errorf("%s: volume %s: no ConfigMap %s", where, v.Name, v.ConfigMap.Name)
				continue
			}
			data = cm.Data
		case v.Secret != nil:
			s, ok := secrets[v.Secret.SecretName]
			if !ok {
				t.Errorf("%s: volume %s: no Secret %s", where, v.Name, v.Secret.SecretName)
				continue
			}
			data = map[string]string{}
			for k, b := range s.Data {
				data[k] = string(b)
			}
			for k, s := range s.StringData {
				data[k] = s
			}
		default:
			continue
		}
		if m.SubPath != "" {
			body, ok := data[m.SubPath]
			if !ok {
				t.Errorf("%s: mount %s: subPath %s is not a key of the volume", where, m.Name, m.SubPath)
			}
			p.files[m.MountPath] = body
			continue
		}
		for k, body := range data {
			p.files[strings.TrimRight(m.MountPath, "/")+"/"+k] = body
		}
	}
	return p
}

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

// portOf resolves a probe or Service port (a number or a container port
// name) to a number.
func portOf(t *testing.T, c corev1.Container, name string, number int32) int32 {
	t.Helper()
	if name == "" {
		return number
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Errorf("container %s has no port named %s", c.Name, name)
	return 0
}

func hostPort(t *testing.T, what, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("%s %q: %v", what, addr, err)
	}
	return h, p
}

// labelsMatch reports whether every selector label is on the template.
func labelsMatch(selector, labels map[string]string) error {
	if len(selector) == 0 {
		return fmt.Errorf("empty selector selects everything")
	}
	for k, v := range selector {
		if labels[k] != v {
			return fmt.Errorf("selector %s=%s not on the pod template (%v)", k, v, labels)
		}
	}
	return nil
}
