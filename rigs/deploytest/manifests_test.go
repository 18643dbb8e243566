package deploytest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// NetworkAttachmentDefinition is multus' CRD; k8s.io/api does not have it,
// so its (small) schema is spelled out here.
type NetworkAttachmentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Config string `json:"config"`
	} `json:"spec"`
}

// Kustomization covers the fields our kustomization.yaml files use; an
// unknown (or misspelled) field fails the strict decode like in a manifest.
type Kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources,omitempty"`
	Components []string `json:"components,omitempty"`
	Patches    []struct {
		Path   string `json:"path"`
		Target *struct {
			Kind string `json:"kind,omitempty"`
			Name string `json:"name,omitempty"`
		} `json:"target,omitempty"`
	} `json:"patches,omitempty"`
	Labels []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors,omitempty"`
		IncludeTemplates bool              `json:"includeTemplates,omitempty"`
	} `json:"labels,omitempty"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// object is one decoded YAML document.
type object struct {
	file string // relative to deploy/kubernetes
	obj  any
}

// kinds maps apiVersion/kind to the Go type a document must decode into.
var kinds = map[string]func() any{
	"v1/Namespace":                  func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":                  func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                     func() any { return &corev1.Secret{} },
	"v1/Service":                    func() any { return &corev1.Service{} },
	"apps/v1/StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"apps/v1/DaemonSet":             func() any { return &appsv1.DaemonSet{} },
	"policy/v1/PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
	"batch/v1/Job":                  func() any { return &batchv1.Job{} },
	"k8s.cni.cncf.io/v1/NetworkAttachmentDefinition": func() any { return &NetworkAttachmentDefinition{} },
	"kustomize.config.k8s.io/v1beta1/Kustomization":  func() any { return &Kustomization{} },
	"kustomize.config.k8s.io/v1alpha1/Component":     func() any { return &Kustomization{} },
}

// strict decodes YAML into v, rejecting duplicate keys, fields v does not
// have and fields in the wrong case, which is what a typo in a manifest
// usually is: the API server drops such a field (or only warns), and the
// setting silently never applies. encoding/json alone would accept
// "clusterIp" for clusterIP; sigs.k8s.io/json matches case like the API
// server does.
func strict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// decodeAll splits a multi-document file and decodes every document into
// its type.
func decodeAll(name string, data []byte) ([]object, error) {
	var out []object
	for i, doc := range docSep.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("%s doc %d: %v", name, i, err)
		}
		mk, ok := kinds[tm.APIVersion+"/"+tm.Kind]
		if !ok {
			return nil, fmt.Errorf("%s doc %d: no Go type for %s %s: add it to kinds", name, i, tm.APIVersion, tm.Kind)
		}
		v := mk()
		if err := strict([]byte(doc), v); err != nil {
			return nil, fmt.Errorf("%s doc %d (%s): %v", name, i, tm.Kind, err)
		}
		out = append(out, object{file: name, obj: v})
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// loadTree decodes every YAML file under deploy/kubernetes, keyed by its
// path relative to that directory.
func loadTree(t *testing.T) map[string][]object {
	t.Helper()
	root := repo(t, "deploy", "kubernetes")
	out := map[string][]object{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := decodeAll(rel, data)
		if err != nil {
			t.Error(err)
			return nil
		}
		out[rel] = objs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no manifests under deploy/kubernetes")
	}
	return out
}

// find returns the single object of type T in file.
func find[T any](t *testing.T, tree map[string][]object, file string) T {
	t.Helper()
	var found []T
	for _, o := range tree[file] {
		if v, ok := o.obj.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%s: %d objects of type %T, want 1", file, len(found), zero)
	}
	return found[0]
}
