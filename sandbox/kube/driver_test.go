package kube

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func listOpts(sel string) metav1.ListOptions { return metav1.ListOptions{LabelSelector: sel} }

// TestCreateObjects: a sandbox is a Pod with the user's image, limits as
// resources, a locked-down security context, the helper installed and
// the egress locked by an init container that alone holds NET_ADMIN,
// plus its Secret (secret values never in the Pod spec), its workspace
// claim and a NetworkPolicy denying egress; all labelled.
func TestCreateObjects(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "python:3", Name: "py", CPU: 0.5, MemoryBytes: 256 << 20, DiskBytes: 2 << 30,
		Env: map[string]string{"A": "1"}, Secrets: []sandbox.Secret{{Name: "TOKEN", Value: "s3cret"}, {Name: "KEY", Value: "k", File: "/etc/key"}},
		Tags: map[string]string{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(in.ID, "sb_") || in.State != sandbox.StateRunning || in.Name != "py" || in.CPU != 0.5 {
		t.Errorf("Create = %+v", in)
	}
	pod, err := f.c.CoreV1().Pods(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels[LabelSandbox] != in.ID || pod.Labels[LabelOffice] != "o1" || pod.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("pod labels = %v", pod.Labels)
	}
	ps := pod.Spec
	if ps.RuntimeClassName == nil || *ps.RuntimeClassName != "gvisor" || *ps.AutomountServiceAccountToken ||
		ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod spec: runtime class %v, token automount %v, seccomp %v", ps.RuntimeClassName, *ps.AutomountServiceAccountToken, ps.SecurityContext.SeccompProfile)
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if c.Image != "python:3" || c.Command[0] != helperPath || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot || *sc.RunAsUser != 1000 ||
		len(sc.Capabilities.Add) != 0 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("sandbox container: image %s, command %v, security %+v", c.Image, c.Command, sc)
	}
	if got := c.Resources.Limits.Cpu().MilliValue(); got != 500 {
		t.Errorf("cpu limit = %dm, want 500m", got)
	}
	if got := c.Resources.Limits.Memory().Value(); got != 256<<20 {
		t.Errorf("memory limit = %d, want %d", got, 256<<20)
	}
	if got := c.Resources.Limits.StorageEphemeral().Value(); got != 2<<30 {
		t.Errorf("ephemeral storage limit = %d, want %d", got, 2<<30)
	}
	for _, e := range c.Env {
		if e.Value == "s3cret" {
			t.Error("a secret value is in the pod spec")
		}
	}
	var lock *corev1.Container
	for i := range ps.InitContainers {
		if ps.InitContainers[i].Name == "prepare" {
			lock = &ps.InitContainers[i]
		}
	}
	if lock == nil || added(lock) != "NET_ADMIN" || len(lock.Command) != 3 || len(ps.InitContainers) != 1 {
		t.Errorf("init container = %+v, want one, with NET_ADMIN and no allowed CIDRs", lock)
	}
	np, err := f.c.NetworkingV1().NetworkPolicies(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil || len(np.Spec.Egress) != 0 || np.Spec.PolicyTypes[0] != "Egress" {
		t.Errorf("network policy = %+v, %v; want egress denied", np, err)
	}
	sec, err := f.c.CoreV1().Secrets(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil || string(sec.Data[secretKey("TOKEN")]) != "s3cret" || len(sec.Data[tokenKey]) != 64 ||
		strings.Contains(sec.Annotations[AnnotationRecord], "s3cret") {
		t.Errorf("secret = %+v, %v", sec, err)
	}
	pvc, err := f.c.CoreV1().PersistentVolumeClaims(testNS).Get(ctx, objName(in.ID)+wsSuffix, metav1.GetOptions{})
	if err != nil || *pvc.Spec.StorageClassName != "fast" {
		t.Errorf("claim = %+v, %v", pvc, err)
	}
	if got, err := f.d.Get(ctx, "py"); err != nil || got.ID != in.ID {
		t.Errorf("Get(name) = %+v, %v", got, err)
	}
	if _, err := f.d.Create(ctx, sandbox.Spec{Image: "x", Name: "py"}); bullpen.ErrorCode(err) != bullpen.ECONFLICT {
		t.Errorf("Create with a taken name = %v, want conflict", err)
	}
	if !f.sawEvent(sandbox.EventCreated, in.ID) {
		t.Error("no created event")
	}
}

// added names the capabilities a container adds.
func added(c *corev1.Container) string {
	var s []string
	for _, a := range c.SecurityContext.Capabilities.Add {
		s = append(s, string(a))
	}
	return strings.Join(s, ",")
}

// TestExecAndFiles: commands get stdin, their directory and environment,
// stream their output and report their status; files go in and out,
// errors keep their codes. (The helper runs in this process here; the
// real-cluster test runs it in a Pod.)
func TestExecAndFiles(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	dir := t.TempDir()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "host", Workdir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if img := f.podImage(t, in.ID); img != "debian:13" {
		t.Errorf("host image = %q, want the configured one", img)
	}
	r, err := f.d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "cat; echo \" $X $(pwd)\"; exit 3"},
		Env: map[string]string{"X": "x"}, Stdin: strings.NewReader("in")})
	if err != nil || string(r.Stdout) != "in x "+dir+"\n" || r.ExitCode != 3 {
		t.Errorf("Run = %+v (%q), %v; want stdin, env, workdir and exit 3", r, r.Stdout, err)
	}
	p, err := f.d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stdout())
	go io.Copy(io.Discard, p.Stderr())
	start := time.Now()
	res, err := p.Wait()
	if err != nil || !res.TimedOut || res.Code != -1 || time.Since(start) > 10*time.Second {
		t.Errorf("a command past its timeout: %+v, %v after %s; want killed, timed out", res, err, time.Since(start))
	}
	if err := f.d.WriteFile(ctx, in.ID, dir+"/a.txt", strings.NewReader("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := f.d.ReadFile(ctx, in.ID, dir+"/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "hello" {
		t.Errorf("ReadFile = %q", b)
	}
	if fi, err := f.d.Stat(ctx, in.ID, dir+"/a.txt"); err != nil || fi.Size != 5 || fi.Mode.Perm() != 0o600 {
		t.Errorf("Stat = %+v, %v", fi, err)
	}
	if err := f.d.Mkdir(ctx, in.ID, dir+"/d/e", true); err != nil {
		t.Error(err)
	}
	if err := f.d.Rename(ctx, in.ID, dir+"/a.txt", dir+"/d/b.txt"); err != nil {
		t.Error(err)
	}
	if l, err := f.d.ListFiles(ctx, in.ID, dir+"/d"); err != nil || len(l) != 2 {
		t.Errorf("ListFiles = %+v, %v; want b.txt and e", l, err)
	}
	for _, c := range []struct {
		name string
		err  error
		code string
	}{
		{"read a missing file", func() error { _, err := f.d.ReadFile(ctx, in.ID, dir+"/nope"); return err }(), bullpen.ENOTFOUND},
		{"remove a full dir", f.d.Remove(ctx, in.ID, dir+"/d", false), bullpen.ECONFLICT},
		{"pause", f.d.Pause(ctx, in.ID), bullpen.EUNSUPPORTED},
		{"snapshot", func() error { _, err := f.d.Snapshot(ctx, in.ID, "s"); return err }(), bullpen.EUNSUPPORTED},
		{"resume", f.d.Resume(ctx, in.ID), bullpen.EUNSUPPORTED},
		{"attach a host dir", f.d.Attach(ctx, in.ID, []sandbox.Mount{{HostPath: "/", Path: "/h"}}, nil), bullpen.EUNSUPPORTED},
	} {
		if got := bullpen.ErrorCode(c.err); got != c.code {
			t.Errorf("%s: %v (code %q), want %q", c.name, c.err, got, c.code)
		}
	}
	if err := f.d.Pause(ctx, in.ID); !strings.Contains(bullpen.ErrorMessage(err), "the kubernetes driver cannot") {
		t.Errorf("Pause = %v, want a refusal naming the driver", err)
	}
	if err := f.d.Remove(ctx, in.ID, dir+"/d", true); err != nil {
		t.Error(err)
	}
}

func (f *fakeCluster) podImage(t *testing.T, id string) string {
	t.Helper()
	pod, err := f.c.CoreV1().Pods(testNS).Get(context.Background(), objName(id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Spec.Containers[0].Image
}

// TestStopStartTerminate: stop deletes the Pod and keeps the claim and
// the record, start makes a new Pod, terminate leaves nothing labelled
// with the sandbox.
func TestStopStartTerminate(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.objects(t, in.ID); got["pod"] != 0 || got["claim"] != 1 || got["secret"] != 1 {
		t.Errorf("after Stop: %v, want no pod, the claim and the secret", got)
	}
	if g, _ := f.d.Get(ctx, in.ID); g.State != sandbox.StateStopped {
		t.Errorf("state after Stop = %s", g.State)
	}
	if _, err := f.d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"true"}}); bullpen.ErrorCode(err) != bullpen.ECONFLICT {
		t.Errorf("Exec in a stopped sandbox = %v, want conflict", err)
	}
	if err := f.d.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.objects(t, in.ID); got["pod"] != 1 {
		t.Errorf("after Start: %v, want a pod", got)
	}
	if err := f.d.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	for kind, n := range f.objects(t, in.ID) {
		if n != 0 {
			t.Errorf("after Terminate: %d %s left", n, kind)
		}
	}
	if _, err := f.d.Get(ctx, in.ID); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Errorf("Get after Terminate = %v, want not found", err)
	}
	for _, typ := range []sandbox.EventType{sandbox.EventStopped, sandbox.EventStarted, sandbox.EventTerminated} {
		if !f.sawEvent(typ, in.ID) {
			t.Errorf("no %s event", typ)
		}
	}
}

// TestReconcile: objects of a sandbox nobody knows are deleted (another
// office's are not), and a running sandbox whose Pod was deleted behind
// the driver's back is marked stopped with a crashed event, by the watch.
func TestReconcile(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bullpen-orphan", Namespace: testNS, Labels: f.d.labels("sb_00000000000000aa")}}
	other := orphan.DeepCopy()
	other.Name, other.Labels[LabelOffice] = "bullpen-other", "o2"
	for _, p := range []*corev1.Pod{orphan, other} {
		if _, err := f.c.CoreV1().Pods(testNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.objects(t, "sb_00000000000000aa"); got["pod"] != 0 {
		t.Errorf("the orphan pod is still there: %v", got)
	}
	if _, err := f.c.CoreV1().Pods(testNS).Get(ctx, "bullpen-other", metav1.GetOptions{}); err != nil {
		t.Errorf("another office's pod went: %v", err)
	}
	if err := f.c.CoreV1().Pods(testNS).Delete(ctx, objName(in.ID), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !f.sawEvent(sandbox.EventCrashed, in.ID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g, _ := f.d.Get(ctx, in.ID); g.State != sandbox.StateStopped || !f.sawEvent(sandbox.EventCrashed, in.ID) {
		t.Errorf("a sandbox whose pod vanished: state %s, crashed event %v; want stopped with the event", g.State, f.sawEvent(sandbox.EventCrashed, in.ID))
	}
}

// TestHalfCreated: the record of a create that never finished (its
// replica died) is deleted with whatever it made, once the start timeout
// has passed.
func TestHalfCreated(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	r, _, err := f.d.newRecord(sandbox.Spec{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	r.Info.CreatedAt = time.Now().Add(-time.Hour)
	if _, err := f.c.CoreV1().Secrets(testNS).Create(ctx, f.d.secretObject(r, nil, "t"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.CoreV1().PersistentVolumeClaims(testNS).Create(ctx, f.d.claimObject(r), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for kind, n := range f.objects(t, r.Info.ID) {
		if n != 0 {
			t.Errorf("after Reconcile: %d %s left of a half-made sandbox", n, kind)
		}
	}
}

// TestTimeout: a sandbox past its lifetime is terminated.
func TestTimeout(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !f.sawEvent(sandbox.EventTimedOut, in.ID) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := f.d.Get(ctx, in.ID); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Errorf("Get after the timeout = %v, want not found", err)
	}
}

// TestHalfTerminated: a sandbox whose terminate marked its record and
// died before deleting everything is finished by the next Reconcile.
func TestHalfTerminated(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.update(ctx, in.ID, func(i *sandbox.Info) { i.State = sandbox.StateTerminated }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Get(ctx, in.ID); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Errorf("Get of a terminating sandbox = %v, want not found", err)
	}
	if err := f.d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for kind, n := range f.objects(t, in.ID) {
		if n != 0 {
			t.Errorf("after Reconcile: %d %s left of a half-terminated sandbox", n, kind)
		}
	}
}
