package deploytest

import (
	"encoding/json"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var overlays = []string{"shared", "exclusive", "hostnetwork"}

// Every kustomization names files that exist, and every manifest in its
// directory is used: a forgotten file is a resource nobody deploys.
func TestKustomizations(t *testing.T) {
	tree := loadTree(t)
	root := repo(t, "deploy", "kubernetes")
	dirs := 0
	for file, objs := range tree {
		if filepath.Base(file) != "kustomization.yaml" {
			continue
		}
		dirs++
		k := objs[0].obj.(*Kustomization)
		dir := filepath.Dir(file)
		used := map[string]bool{"kustomization.yaml": true}
		var refs []string
		refs = append(refs, k.Resources...)
		refs = append(refs, k.Components...)
		for _, p := range k.Patches {
			refs = append(refs, p.Path)
		}
		for _, r := range refs {
			if _, err := os.Stat(filepath.Join(root, dir, r)); err != nil {
				t.Errorf("%s: %s does not exist", file, r)
			}
			used[r] = true
		}
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".yaml") && !used[e.Name()] {
				t.Errorf("%s/%s is not referenced by its kustomization.yaml", dir, e.Name())
			}
		}
	}
	if dirs != 1+len(overlays) {
		t.Errorf("%d kustomizations, want the base and %d overlays", dirs, len(overlays))
	}
	base := find[*Kustomization](t, tree, "base/kustomization.yaml")
	if len(base.Images) != 1 || base.Images[0].Name != "rdmamesh" {
		t.Error("the base must rewrite the rdmamesh image in one place (images:)")
	}
	for _, o := range overlays {
		k := find[*Kustomization](t, tree, "overlays/"+o+"/kustomization.yaml")
		if !slices.Contains(k.Resources, "../../base") {
			t.Errorf("overlay %s does not build on ../../base", o)
		}
		// The base's namespace applies to the base's objects only; the
		// overlay's own (the network attachment) need it too.
		if k.Namespace != base.Namespace {
			t.Errorf("overlay %s: namespace %q, the base uses %q", o, k.Namespace, base.Namespace)
		}
	}
}

// overlayPatch returns an overlay's worker DaemonSet patch and its network
// attachment, if any.
func overlayPatch(t *testing.T, tree map[string][]object, overlay string) (*appsv1.DaemonSet, *NetworkAttachmentDefinition) {
	t.Helper()
	ds := find[*appsv1.DaemonSet](t, tree, "overlays/"+overlay+"/worker-patch.yaml")
	var nad *NetworkAttachmentDefinition
	if _, ok := tree["overlays/"+overlay+"/network.yaml"]; ok {
		nad = find[*NetworkAttachmentDefinition](t, tree, "overlays/"+overlay+"/network.yaml")
	}
	return ds, nad
}

// rdmaResource is the extended resource a patch requests (one not in the
// core namespace: rdma/..., nvidia.com/..., intel.com/...).
func rdmaResource(t *testing.T, c corev1.Container) string {
	t.Helper()
	var found []string
	for name, q := range c.Resources.Limits {
		if strings.Contains(string(name), "/") {
			if q.Value() != 1 {
				t.Errorf("%s: %s, want 1", name, q.String())
			}
			found = append(found, string(name))
		}
	}
	if len(found) != 1 {
		t.Fatalf("worker patch requests %v, want exactly one RDMA device resource", found)
	}
	return found[0]
}

type cniConfig struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	IPAM    *cniIPAM    `json:"ipam"`
	Plugins []cniConfig `json:"plugins"`
}

type cniIPAM struct {
	Type  string `json:"type"`
	Range string `json:"range"`
}

func TestOverlayNetworks(t *testing.T) {
	tree := loadTree(t)
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			ds, nad := overlayPatch(t, tree, overlay)
			spec := ds.Spec.Template.Spec
			c := container(t, spec, "worker")
			res := rdmaResource(t, c)
			if overlay == "hostnetwork" {
				if !spec.HostNetwork || spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
					t.Error("hostnetwork: needs hostNetwork and dnsPolicy ClusterFirstWithHostNet to resolve the coordinators")
				}
				if nad != nil {
					t.Error("hostnetwork: a network attachment makes no sense in the host's namespace")
				}
				return
			}
			if nad == nil {
				t.Fatal("no NetworkAttachmentDefinition: the pod would have no RoCE netdev (No such device at RTR)")
			}
			if got := ds.Spec.Template.Annotations["k8s.v1.cni.cncf.io/networks"]; got != nad.Name {
				t.Errorf("pod asks for network %q, the overlay defines %q", got, nad.Name)
			}
			var cfg cniConfig
			if err := json.Unmarshal([]byte(nad.Spec.Config), &cfg); err != nil {
				t.Fatalf("NAD config is not JSON: %v", err)
			}
			if cfg.Name != nad.Name {
				t.Errorf("CNI config name %q != NAD name %q", cfg.Name, nad.Name)
			}
			plugins := cfg.Plugins
			if len(plugins) == 0 {
				plugins = []cniConfig{cfg}
			}
			var types []string
			var ipam *cniIPAM
			for _, p := range plugins {
				types = append(types, p.Type)
				if p.IPAM != nil {
					ipam = p.IPAM
				}
			}
			switch overlay {
			case "shared":
				if !slices.Equal(types, []string{"macvlan"}) || !strings.HasPrefix(res, "rdma/") {
					t.Errorf("shared mode: want macvlan and the shared device plugin's rdma/ resource, got %v and %s", types, res)
				}
			case "exclusive":
				if !slices.Equal(types, []string{"sriov", "rdma"}) {
					t.Errorf("exclusive mode: want sriov then the rdma CNI (moves the RDMA device into the pod), got %v", types)
				}
				if got := nad.Annotations["k8s.v1.cni.cncf.io/resourceName"]; got != res {
					t.Errorf("NAD resourceName %q != requested resource %q: multus would not find the VF", got, res)
				}
			}
			if ipam == nil || ipam.Type != "whereabouts" {
				t.Fatal("IPAM must be cluster-wide (whereabouts); host-local repeats addresses on every node")
			}
			// The GID policy must select the addresses this network hands out.
			rng, err := netip.ParsePrefix(ipam.Range)
			if err != nil {
				t.Fatalf("IPAM range: %v", err)
			}
			gid := ""
			for _, e := range c.Env {
				if e.Name == "RDMAMESH_WORKER_GID" {
					gid = e.Value
				}
			}
			sub, ok := strings.CutPrefix(gid, "subnet=")
			pol, err := netip.ParsePrefix(sub)
			if !ok || err != nil || !pol.Contains(rng.Addr()) || pol.Bits() > rng.Bits() {
				t.Errorf("RDMAMESH_WORKER_GID %q does not cover the network's range %s", gid, ipam.Range)
			}
		})
	}
}

func TestGateJob(t *testing.T) {
	tree := loadTree(t)
	job := find[*batchv1.Job](t, tree, "examples/gate-job.yaml")
	spec := job.Spec.Template.Spec
	c := container(t, spec, "gate")
	if err := cli(t).CheckArgs(c.Args); err != nil {
		t.Fatal(err)
	}
	if c.Args[0] != "gate" {
		t.Fatalf("runs %q, want gate", c.Args[0])
	}
	flags := argValues(c.Args)
	u, err := url.Parse(flags["coordinator"])
	if err != nil || u.Scheme != "http" {
		t.Fatalf("--coordinator %q", flags["coordinator"])
	}
	svcOK := false
	for _, o := range tree["base/coordinator-services.yaml"] {
		s := o.obj.(*corev1.Service)
		for _, p := range s.Spec.Ports {
			svcOK = svcOK || (s.Name == u.Hostname() && p.Port == 8080 && u.Port() == "8080")
		}
	}
	if !svcOK {
		t.Errorf("--coordinator %s: no such Service and port in the base", u)
	}
	for _, f := range []string{"junit", "json"} {
		path := flags[f]
		onVolume := false
		for _, m := range c.VolumeMounts {
			onVolume = onVolume || strings.HasPrefix(path, strings.TrimRight(m.MountPath, "/")+"/")
		}
		if path == "" || !onVolume {
			t.Errorf("--%s %q is not on a mounted volume (the root filesystem is read-only)", f, path)
		}
	}
	// The coordinators take no sweep without the token: the gate reads it
	// from the base's Secret.
	tokenOK := false
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.Secret == nil || v.Secret.SecretName != "rdmamesh-secrets" {
				continue
			}
			for _, it := range v.Secret.Items {
				tokenOK = tokenOK || (it.Key == "api.token" && flags["token-file"] == strings.TrimRight(m.MountPath, "/")+"/"+it.Path)
			}
		}
	}
	if !tokenOK {
		t.Errorf("--token-file %q is not the api.token of Secret rdmamesh-secrets mounted in the pod", flags["token-file"])
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("restartPolicy must be Never: podFailurePolicy needs it, and a verdict must not be retried in place")
	}
	// Exit codes of rdmamesh gate: 1 unhealthy and 2 usage are final, 3
	// (infrastructure) may pass on a retry.
	failsAt := map[int32]bool{}
	if pfp := job.Spec.PodFailurePolicy; pfp != nil {
		for _, r := range pfp.Rules {
			if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
				r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
				for _, v := range r.OnExitCodes.Values {
					failsAt[v] = true
				}
			}
		}
	}
	if !failsAt[1] || !failsAt[2] || failsAt[3] {
		t.Errorf("podFailurePolicy fails the Job at once on %v; want exit 1 (unhealthy) and 2 (usage), not 3 (retryable)", failsAt)
	}
}

// argValues maps --flag to its value in an argument list.
func argValues(args []string) map[string]string {
	out := map[string]string{}
	for i := 1; i < len(args); i++ {
		name, val, ok := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if !ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			val = args[i+1]
			i++
		}
		out[name] = val
	}
	return out
}

// With kubectl on the PATH, build every overlay as `kubectl apply -k` would
// and check the merged result: patches that no longer match, or a merge
// that drops a base setting, show up only here. Without kubectl the files
// are still checked one by one above.
func TestRenderedOverlays(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed: overlays checked file by file only")
	}
	tree := loadTree(t)
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			out, err := exec.Command(kubectl, "kustomize", repo(t, "deploy", "kubernetes", "overlays", overlay)).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl kustomize: %v\n%s", err, out)
			}
			objs, err := decodeAll(overlay, out)
			if err != nil {
				t.Fatal(err)
			}
			cms := map[string]*corev1.ConfigMap{}
			secrets := map[string]*corev1.Secret{}
			var ds *appsv1.DaemonSet
			for _, o := range objs {
				switch v := o.obj.(type) {
				case *corev1.ConfigMap:
					cms[v.Name] = v
				case *corev1.Secret:
					secrets[v.Name] = v
				case *appsv1.DaemonSet:
					ds = v
				}
				if _, isNS := o.obj.(*corev1.Namespace); !isNS {
					if m, ok := o.obj.(metav1.Object); ok && m.GetNamespace() != "rdmamesh" {
						t.Errorf("%T %s rendered in namespace %q, want rdmamesh", o.obj, m.GetName(), m.GetNamespace())
					}
				}
			}
			if ds == nil {
				t.Fatal("no worker DaemonSet rendered")
			}
			spec := ds.Spec.Template.Spec
			c := container(t, spec, "worker")
			if c.Image != "rdmamesh:dev" {
				t.Errorf("image %q: the base's images: entry did not apply", c.Image)
			}
			if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
				t.Error("the patch's limits replaced the base's memory limit instead of merging")
			}
			want, _ := overlayPatch(t, tree, overlay)
			res := rdmaResource(t, container(t, want.Spec.Template.Spec, "worker"))
			if _, ok := c.Resources.Limits[corev1.ResourceName(res)]; !ok {
				t.Errorf("rendered worker lacks %s", res)
			}
			got := check(t, podProcess(t, overlay+" worker", spec, c, cms, withRealSecrets(secrets)))
			if got.cfg != nil && overlay != "hostnetwork" && !strings.HasPrefix(got.cfg.Worker.GID, "subnet=") {
				t.Errorf("worker.gid %q: the overlay's GID policy did not survive the merge", got.cfg.Worker.GID)
			}
		})
	}
}
