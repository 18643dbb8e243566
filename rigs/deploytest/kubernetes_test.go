package deploytest

import (
	"encoding/base64"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The strict decoder is what makes the manifest tests mean anything, so it
// is tested too: a misspelled field and a duplicate key must fail.
func TestStrictDecodeRejectsTypos(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  clusterIp: None\n",
		"duplicate key": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nmetadata: {name: y}\n",
		"wrong type":    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: three}\n",
		"unknown kind":  "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
	} {
		if _, err := decodeAll(name, []byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good := "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  clusterIP: None\n"
	if _, err := decodeAll("good", []byte(good)); err != nil {
		t.Errorf("a valid Service was rejected: %v", err)
	}
}

// baseObjects are the base's ConfigMaps and Secrets, by name.
func baseObjects(t *testing.T, tree map[string][]object) (map[string]*corev1.ConfigMap, map[string]*corev1.Secret) {
	t.Helper()
	cms := map[string]*corev1.ConfigMap{}
	secrets := map[string]*corev1.Secret{}
	for file, objs := range tree {
		if !strings.HasPrefix(file, "base/") {
			continue
		}
		for _, o := range objs {
			switch v := o.obj.(type) {
			case *corev1.ConfigMap:
				cms[v.Name] = v
			case *corev1.Secret:
				secrets[v.Name] = v
			}
		}
	}
	return cms, secrets
}

// withRealSecrets replaces the placeholders the way the docs say to.
func withRealSecrets(secrets map[string]*corev1.Secret) map[string]*corev1.Secret {
	out := map[string]*corev1.Secret{}
	for name, s := range secrets {
		c := s.DeepCopy()
		c.StringData = map[string]string{
			"gossip.key": base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
			"api.token":  "Zm9vYmFyYmF6cXV4",
		}
		out[name] = c
	}
	return out
}

func TestWorkerDaemonSet(t *testing.T) {
	tree := loadTree(t)
	ds := find[*appsv1.DaemonSet](t, tree, "base/worker-daemonset.yaml")
	cms, secrets := baseObjects(t, tree)
	spec := ds.Spec.Template.Spec
	if err := labelsMatch(ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels); err != nil {
		t.Error(err)
	}
	c := container(t, spec, "worker")
	if c.Image != "rdmamesh" {
		t.Errorf("image %q: the kustomization's images entry rewrites \"rdmamesh\" only", c.Image)
	}

	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, "IPC_LOCK") {
		t.Fatal("the worker must add IPC_LOCK: ibv_reg_mr pins memory past RLIMIT_MEMLOCK only with it")
	}
	// Added capabilities reach the effective set of root only.
	if sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Error("IPC_LOCK is effective only for uid 0 in Kubernetes; runAsUser must be 0")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("the worker must not be privileged; the device plugin grants the devices")
	}
	infiniband := false
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && m.MountPath == "/dev/infiniband" && v.HostPath != nil && v.HostPath.Path == "/dev/infiniband" {
				infiniband = true
			}
		}
	}
	if !infiniband {
		t.Error("the worker must mount the host's /dev/infiniband")
	}
	if len(spec.NodeSelector) == 0 {
		t.Error("no nodeSelector: the worker would land on nodes without HCAs")
	}
	if len(spec.Tolerations) == 0 {
		t.Error("no tolerations: tainted GPU nodes would get no worker")
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit throttles the busy-polling loops and fakes latency")
	}

	p := podProcess(t, "worker", spec, c, cms, secrets)
	got := check(t, p)
	if got.cfg == nil {
		return
	}
	if got.secretsErr == nil {
		t.Error("the placeholder Secret must not work: a pod given it must stop, not run with a public key")
	}
	if real := check(t, podProcess(t, "worker", spec, c, cms, withRealSecrets(secrets))); real.cfg != nil && real.secretsErr != nil {
		t.Errorf("generated secrets rejected: %v", real.secretsErr)
	}
	cfg := got.cfg
	if cfg.Worker.Fabric != "verbs" {
		t.Errorf("worker.fabric %q: a Kubernetes worker tests real HCAs", cfg.Worker.Fabric)
	}
	// memberlist takes an IP as its advertise address, not a name.
	if h, _ := hostPort(t, "gossip.advertise", cfg.Gossip.Advertise); net.ParseIP(h) == nil {
		t.Errorf("gossip.advertise %q: memberlist needs an IP there", cfg.Gossip.Advertise)
	}
	_, apiPort := hostPort(t, "worker.api_listen", cfg.Worker.APIListen)
	_, gossipPort := hostPort(t, "gossip.bind", cfg.Gossip.Bind)
	if rp := c.ReadinessProbe; rp == nil || rp.HTTPGet == nil ||
		strconv.Itoa(int(portOf(t, c, rp.HTTPGet.Port.StrVal, rp.HTTPGet.Port.IntVal))) != apiPort {
		t.Errorf("readiness probe must hit the worker API port %s", apiPort)
	}
	ports := map[string]bool{}
	for _, cp := range c.Ports {
		ports[string(cp.Protocol)+"/"+strconv.Itoa(int(cp.ContainerPort))] = true
	}
	for _, want := range []string{"/" + apiPort, "TCP/" + gossipPort, "UDP/" + gossipPort} {
		if !ports[want] && !ports["TCP"+want] {
			t.Errorf("container port %s not declared (have %v)", want, ports)
		}
	}
	if len(cfg.Gossip.Join) == 0 {
		t.Error("the worker joins no one")
	}
	checkJoin(t, tree, cfg.Gossip.Join)
}

// checkJoin: every seed is a Service of the base on its gossip port.
func checkJoin(t *testing.T, tree map[string][]object, join []string) {
	t.Helper()
	services := map[string]*corev1.Service{}
	for _, o := range tree["base/coordinator-services.yaml"] {
		if s, ok := o.obj.(*corev1.Service); ok {
			services[s.Name] = s
		}
	}
	for _, seed := range join {
		h, p := hostPort(t, "gossip.join", seed)
		s, ok := services[h]
		if !ok {
			t.Errorf("gossip.join %s: no Service %s", seed, h)
			continue
		}
		if s.Spec.ClusterIP != corev1.ClusterIPNone || !s.Spec.PublishNotReadyAddresses {
			t.Errorf("gossip.join %s: the Service must be headless and publish not-ready pods, or gossip cannot form before readiness", seed)
		}
		found := false
		for _, sp := range s.Spec.Ports {
			found = found || (strconv.Itoa(int(sp.Port)) == p && sp.Protocol == corev1.ProtocolUDP)
		}
		if !found {
			t.Errorf("gossip.join %s: Service %s lacks UDP port %s (memberlist probes over UDP)", seed, h, p)
		}
	}
}

func TestCoordinatorStatefulSet(t *testing.T) {
	tree := loadTree(t)
	ss := find[*appsv1.StatefulSet](t, tree, "base/coordinator-statefulset.yaml")
	pdb := find[*policyv1.PodDisruptionBudget](t, tree, "base/coordinator-pdb.yaml")
	cms, secrets := baseObjects(t, tree)
	spec := ss.Spec.Template.Spec
	labels := ss.Spec.Template.Labels
	if err := labelsMatch(ss.Spec.Selector.MatchLabels, labels); err != nil {
		t.Error(err)
	}
	if ss.Spec.Replicas == nil || *ss.Spec.Replicas != 3 {
		t.Fatal("replicas must be 3: raft voters, quorum 2")
	}
	replicas := int(*ss.Spec.Replicas)

	c := container(t, spec, "coordinator")
	var claims []string
	for _, pvc := range ss.Spec.VolumeClaimTemplates {
		claims = append(claims, pvc.Name)
	}
	got := check(t, podProcess(t, "coordinator", spec, c, cms, withRealSecrets(secrets), claims...))
	cfg := got.cfg
	if cfg == nil {
		return
	}
	if got.secretsErr != nil {
		t.Errorf("coordinator secrets: %v", got.secretsErr)
	}
	if cfg.Coordinator.BootstrapExpect != replicas {
		t.Errorf("coordinator.bootstrap_expect %d != replicas %d: raft would bootstrap too early or never",
			cfg.Coordinator.BootstrapExpect, replicas)
	}
	if cfg.Coordinator.RaftBind == "" {
		t.Error("three coordinators need coordinator.raft_bind")
	}
	_, bindPort := hostPort(t, "raft_bind", cfg.Coordinator.RaftBind)
	advHost, advPort := hostPort(t, "raft_advertise", cfg.Coordinator.RaftAdvertise)
	if advPort != bindPort || net.ParseIP(advHost) == nil {
		t.Errorf("raft_advertise %q should be the pod IP on the raft_bind port %s", cfg.Coordinator.RaftAdvertise, bindPort)
	}
	if cfg.Coordinator.Name != downward["metadata.name"] {
		t.Errorf("coordinator.name %q: must be the pod name, stable across restarts", cfg.Coordinator.Name)
	}

	// The raft state lives on the claim template's volume.
	if len(ss.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("%d volumeClaimTemplates, want 1 for the raft state", len(ss.Spec.VolumeClaimTemplates))
	}
	claim := ss.Spec.VolumeClaimTemplates[0]
	if q := claim.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("1Gi")) < 0 {
		t.Errorf("claim %s asks for %s", claim.Name, q.String())
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == claim.Name && m.MountPath == cfg.Coordinator.DataDir)
	}
	if cfg.Coordinator.DataDir == "" || !mounted {
		t.Errorf("coordinator.data_dir %q is not the claim %s's mount: raft state would be lost on restart",
			cfg.Coordinator.DataDir, claim.Name)
	}

	// Services: the headless one is the StatefulSet's; the API one reaches
	// the API port.
	_, apiPort := hostPort(t, "api_listen", cfg.Coordinator.APIListen)
	for _, o := range tree["base/coordinator-services.yaml"] {
		s := o.obj.(*corev1.Service)
		if err := labelsMatch(s.Spec.Selector, labels); err != nil {
			t.Errorf("Service %s: %v", s.Name, err)
		}
		if s.Name == ss.Spec.ServiceName && s.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("serviceName %s must be headless", s.Name)
		}
		for _, sp := range s.Spec.Ports {
			if sp.Name == "http" && sp.TargetPort.String() != "0" &&
				strconv.Itoa(int(portOf(t, c, sp.TargetPort.StrVal, sp.TargetPort.IntVal))) != apiPort {
				t.Errorf("Service %s port http targets %s, the API listens on %s", s.Name, sp.TargetPort.String(), apiPort)
			}
		}
	}
	found := false
	for _, o := range tree["base/coordinator-services.yaml"] {
		found = found || o.obj.(*corev1.Service).Name == ss.Spec.ServiceName
	}
	if !found {
		t.Errorf("serviceName %s: no such Service", ss.Spec.ServiceName)
	}
	checkJoin(t, tree, cfg.Gossip.Join)

	// The PDB must keep a quorum: at most replicas - (replicas/2+1) down.
	if err := labelsMatch(pdb.Spec.Selector.MatchLabels, labels); err != nil {
		t.Errorf("PodDisruptionBudget: %v", err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() < 1 ||
		pdb.Spec.MaxUnavailable.IntValue() > replicas-(replicas/2+1) {
		t.Errorf("PodDisruptionBudget maxUnavailable %v: must allow a drain yet keep a raft quorum of %d", pdb.Spec.MaxUnavailable, replicas/2+1)
	}
}
