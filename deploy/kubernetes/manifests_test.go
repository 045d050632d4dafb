// Package kubernetes_test checks the Kustomize manifests of this folder:
// offline (they parse, the kustomization lists exactly them, the Deployment's
// flags are Bullpen's, RBAC stays in the sandbox namespace) and against the
// real test cluster's apiserver (a server-side dry-run create of every
// object, so the apiserver's own validation judges them).
package kubernetes_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// readDocs decodes every YAML document of file into an object.
func readDocs(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		// the unstructured decoder keeps integers as int64, as the apiserver reads them
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(raw); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		objs = append(objs, o)
	}
}

// kustomization reads kustomization.yaml and refuses any field but the ones
// that leave the listed files' objects as they are (the image aside), so that
// the files are what `kubectl apply -k` applies.
func kustomization(t *testing.T) []string {
	t.Helper()
	docs := readDocs(t, "kustomization.yaml")
	if len(docs) != 1 {
		t.Fatalf("kustomization.yaml has %d documents, want 1", len(docs))
	}
	k := docs[0].Object
	for key := range k {
		if !slices.Contains([]string{"apiVersion", "kind", "resources", "images"}, key) {
			t.Errorf("kustomization.yaml sets %q: only resources and images keep the files equal to the applied objects", key)
		}
	}
	var files []string
	res, _ := k["resources"].([]any)
	for _, r := range res {
		s, _ := r.(string)
		files = append(files, s)
	}
	return files
}

// manifests returns every object of the files kustomization.yaml lists, in order.
func manifests(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, f := range kustomization(t) {
		objs = append(objs, readDocs(t, f)...)
	}
	return objs
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	listed := kustomization(t)
	onDisk, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	onDisk = slices.DeleteFunc(onDisk, func(f string) bool { return f == "kustomization.yaml" })
	sort.Strings(onDisk)
	sorted := slices.Sorted(slices.Values(listed))
	if !slices.Equal(sorted, onDisk) {
		t.Errorf("kustomization.yaml lists %v, the folder has %v", sorted, onDisk)
	}
	for _, o := range manifests(t) {
		if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
			t.Errorf("object without apiVersion, kind or name: %v", o.Object)
		}
		if o.GetKind() != "Namespace" && o.GetNamespace() == "" {
			t.Errorf("%s %s has no namespace: every namespaced object names its own", o.GetKind(), o.GetName())
		}
	}
}

// find returns the object of kind and name, failing the test without one.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the manifests", kind, name)
	return nil
}

func TestRBACOnlyInSandboxNamespace(t *testing.T) {
	objs := manifests(t)
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			t.Errorf("%s %s: Bullpen gets no cluster-wide rights", o.GetKind(), o.GetName())
		}
		if (o.GetKind() == "Role" || o.GetKind() == "RoleBinding") && o.GetNamespace() != "bullpen-sandboxes" {
			t.Errorf("%s %s in namespace %q, want bullpen-sandboxes only", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	role := find(t, objs, "Role", "bullpen-sandboxes")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	granted := map[string][]string{} // resource -> verbs
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		res, _, _ := unstructured.NestedStringSlice(rule, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		for _, x := range res {
			granted[x] = append(granted[x], verbs...)
		}
	}
	want := map[string][]string{
		"pods": {"create", "delete", "get", "list", "watch"}, "pods/exec": {"create", "get"},
		"secrets": {"create", "delete", "get"}, "services": {"create", "delete", "get"},
		"networkpolicies": {"create", "delete", "get"}, "persistentvolumeclaims": {"create", "delete", "get"},
		"volumesnapshots": {"create", "get"},
	}
	for res, verbs := range want {
		for _, v := range verbs {
			if !slices.Contains(granted[res], v) {
				t.Errorf("Role bullpen-sandboxes does not grant %s on %s", v, res)
			}
		}
	}
	for res := range granted {
		if _, ok := want[res]; !ok && res != "pods/log" && res != "events" {
			t.Errorf("Role bullpen-sandboxes grants %s, which the sandbox driver does not need", res)
		}
	}
}

func TestDeploymentTwoSharedReplicas(t *testing.T) {
	d := find(t, manifests(t), "Deployment", "bullpen")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	if replicas != 2 {
		t.Errorf("Deployment bullpen has %d replicas, want 2", replicas)
	}
	args := containerArgs(t, d)
	if !slices.Contains(args, "--shared-database=on") {
		t.Errorf("Deployment bullpen args %v lack --shared-database=on", args)
	}
	if sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName"); sa != "bullpen" {
		t.Errorf("Deployment bullpen runs as service account %q, want bullpen (rbac.yaml)", sa)
	}
	checkFlags(t, args)
}

// containerArgs returns the args of the Deployment's bullpen container.
func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["name"] == "bullpen" {
			args, _, _ := unstructured.NestedStringSlice(m, "args")
			return args
		}
	}
	t.Fatal("Deployment bullpen has no container named bullpen")
	return nil
}
