package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path"
	"regexp"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	nameRe   = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
	envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func invalid(format string, args ...any) error {
	return bullpen.Errorf(bullpen.EINVALID, format, args...)
}

// refuse is what the driver answers for what it cannot do.
func refuse(what string) error {
	return bullpen.Errorf(bullpen.EUNSUPPORTED, "the %s driver cannot %s", Name, what)
}

func notFound(id string) error { return bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", id) }

// newRecord checks a spec and fills in its defaults.
func (d *Driver) newRecord(sp sandbox.Spec) (*record, []sandbox.Secret, error) {
	sc := d.cfg.Sandbox
	switch {
	case sp.Name != "" && (!nameRe.MatchString(sp.Name) || len(sp.Name) > 3 && sp.Name[:3] == "sb_"):
		return nil, nil, invalid("invalid name %q: 1-63 of [a-zA-Z0-9_.-], not starting with sb_", sp.Name)
	case sp.Workdir != "" && !path.IsAbs(sp.Workdir):
		return nil, nil, invalid("workdir must be an absolute path")
	case sp.CPU < 0 || sp.MemoryBytes < 0 || sp.DiskBytes < 0 || sp.Timeout < 0 || sp.IdleTimeout < 0:
		return nil, nil, invalid("limits must not be negative")
	case sp.IdleAction == sandbox.IdlePause:
		return nil, nil, refuse("pause a sandbox")
	}
	if err := d.checkMounts(sp.Mounts); err != nil {
		return nil, nil, err
	}
	if err := d.checkBridges(sp.Bridges, sp.Ports); err != nil {
		return nil, nil, err
	}
	if sp.Image == "" {
		sp.Image = imageHost
	}
	if sp.Workdir == "" {
		sp.Workdir = "/home/sandbox"
	}
	if sp.IdleAction == "" {
		sp.IdleAction = sandbox.IdleStop
	}
	now := sc.Now()
	in := sandbox.Info{ID: newID(), Name: sp.Name, Tags: sp.Tags, Image: sp.Image, State: sandbox.StateRunning,
		Workdir: path.Clean(sp.Workdir), CPU: sp.CPU, MemoryBytes: sp.MemoryBytes, DiskBytes: sp.DiskBytes,
		Env: sp.Env, Mounts: sp.Mounts, Bridges: sp.Bridges, Timeout: sp.Timeout, IdleTimeout: sp.IdleTimeout, IdleAction: sp.IdleAction, Network: sp.Network,
		CreatedAt: now, StartedAt: now, LastActivity: now}
	if in.CPU == 0 {
		in.CPU = sc.DefaultCPU
	}
	if in.MemoryBytes == 0 {
		in.MemoryBytes = sc.DefaultMemoryBytes
	}
	if in.DiskBytes == 0 {
		in.DiskBytes = sc.DefaultDiskBytes
	}
	if in.Timeout > 0 {
		in.ExpiresAt = now.Add(in.Timeout)
	}
	r := &record{Info: in, Files: map[string]string{}, Creating: true}
	for _, s := range sp.Secrets {
		if !envKeyRe.MatchString(s.Name) {
			return nil, nil, invalid("invalid secret name %q", s.Name)
		}
		if s.File != "" {
			if !path.IsAbs(s.File) {
				return nil, nil, invalid("secret file %q must be an absolute path", s.File)
			}
			r.Files[s.Name] = path.Clean(s.File)
		}
		r.Info.SecretNames = append(r.Info.SecretNames, s.Name)
	}
	for k := range sp.Env {
		if !envKeyRe.MatchString(k) {
			return nil, nil, invalid("invalid environment variable %q", k)
		}
	}
	cidrs, err := allowed(sp.Network)
	if err != nil {
		return nil, nil, err
	}
	r.Info.AllowedCIDRs = cidrs
	return r, sp.Secrets, nil
}

// allowed resolves a network policy to IPv4 CIDRs, domains on this host
// at create time, as the local runtime does.
func allowed(p sandbox.NetworkPolicy) ([]string, error) {
	var out []string
	for _, c := range p.Allow {
		_, n, err := net.ParseCIDR(c)
		if err != nil || n.IP.To4() == nil {
			return nil, invalid("invalid IPv4 CIDR %q", c)
		}
		out = append(out, n.String())
	}
	for _, host := range p.Domains {
		ips, err := net.DefaultResolver.LookupIP(context.Background(), "ip4", host)
		if err != nil {
			return nil, invalid("cannot resolve %q: %v", host, err)
		}
		for _, ip := range ips {
			out = append(out, ip.String()+"/32")
		}
	}
	return out, nil
}

// Create makes the sandbox's Secret, claim, NetworkPolicy and Pod and
// waits for the Pod to run; a spec the warm pool serves claims a member
// and writes only the record. On failure nothing it made (or claimed) is
// left.
func (d *Driver) Create(ctx context.Context, sp sandbox.Spec) (sandbox.Info, error) {
	r, secrets, err := d.newRecord(sp)
	if err != nil {
		return sandbox.Info{}, err
	}
	image, err := d.createImage(ctx, r)
	if err != nil {
		return sandbox.Info{}, err
	}
	if sp.Name != "" {
		if _, err := d.Get(ctx, sp.Name); err == nil {
			return sandbox.Info{}, bullpen.Errorf(bullpen.ECONFLICT, "a sandbox named %q exists", sp.Name)
		}
	}
	if len(r.encode()) > recordSize {
		return sandbox.Info{}, bullpen.Errorf(bullpen.ETOOLARGE, "the sandbox's tags and environment are too large")
	}
	var tok [32]byte
	_, _ = rand.Read(tok[:])
	warm := ""
	if poolable(sp) && r.Snapshot == "" { // a pool member's claim is empty
		warm = d.claim(ctx, r, image)
	}
	if warm != "" {
		r.Info.ID = warm // a pool member's id names its objects
	}
	id := r.Info.ID
	d.put(r)
	if warm != "" {
		err = d.makeRecord(ctx, r)
	} else {
		err = d.makeObjects(ctx, r, secrets, hex.EncodeToString(tok[:]), image)
	}
	if err == nil {
		err = d.waitRunning(ctx, id)
	}
	if err != nil {
		d.drop(id)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := d.deleteAll(cctx, id); derr != nil {
			d.log.Error("kube: clean up a failed create", "sandbox", id, "err", derr)
		}
		return sandbox.Info{}, err
	}
	if err := d.updateRecord(ctx, id, func(r *record) error { r.Creating = false; return nil }); err != nil {
		return sandbox.Info{}, err
	}
	d.emit(sandbox.EventCreated, id, "")
	return d.Get(ctx, id)
}

// makeRecord writes the record into the Secret of a claimed pool member
// (which holds the token its Pod started with), making it the sandbox's.
func (d *Driver) makeRecord(ctx context.Context, r *record) error {
	sec, err := d.c.CoreV1().Secrets(d.ns).Get(ctx, objName(r.Info.ID), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("kube: read the secret of %s: %w", r.Info.ID, err)
	}
	delete(sec.Labels, LabelPool)
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations[AnnotationRecord] = r.encode()
	if _, err := d.c.CoreV1().Secrets(d.ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("kube: write the record of %s: %w", r.Info.ID, err)
	}
	return nil
}

func (d *Driver) makeObjects(ctx context.Context, r *record, secrets []sandbox.Secret, token, image string) error {
	id := r.Info.ID
	if _, err := d.c.CoreV1().Secrets(d.ns).Create(ctx, d.secretObject(r, secrets, token), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: create the secret of %s: %w", id, err)
	}
	if _, err := d.c.CoreV1().PersistentVolumeClaims(d.ns).Create(ctx, d.claimObject(r), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: create the workspace claim of %s: %w", id, err)
	}
	if _, err := d.c.NetworkingV1().NetworkPolicies(d.ns).Create(ctx, d.policyObject(r), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: create the network policy of %s: %w", id, err)
	}
	if _, err := d.c.CoreV1().Pods(d.ns).Create(ctx, d.podObject(r, image), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: create the pod of %s: %w", id, err)
	}
	return nil
}

// waitRunning waits for the sandbox container to run.
func (d *Driver) waitRunning(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		pod, err := d.c.CoreV1().Pods(d.ns).Get(ctx, objName(id), metav1.GetOptions{})
		if err == nil {
			if ok, code, why := podRunning(pod); ok {
				return nil
			} else if why != "" {
				return bullpen.Errorf(code, "sandbox %s did not start: %s", id, why)
			}
		}
		select {
		case <-ctx.Done():
			return bullpen.Errorf(bullpen.EUNAVAILABLE, "sandbox %s did not start within %s: %v", id, d.cfg.StartTimeout, podSummary(pod))
		case <-tick.C:
		}
	}
}

// podRunning reports whether the sandbox container runs, or why it never
// will (and the error code for that: an image that is not there is the
// caller's mistake, the rest the cluster's).
func podRunning(pod *corev1.Pod) (ok bool, code, why string) {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false, bullpen.EUNAVAILABLE, "pod " + string(pod.Status.Phase)
	}
	for _, st := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if w := st.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "ImagePullBackOff":
				return false, bullpen.ENOTFOUND, fmt.Sprintf("image %q: %s: %s", st.Image, w.Reason, w.Message)
			case "InvalidImageName":
				return false, bullpen.EINVALID, fmt.Sprintf("image %q: %s: %s", st.Image, w.Reason, w.Message)
			case "CreateContainerConfigError", "CreateContainerError":
				return false, bullpen.EUNAVAILABLE, st.Name + ": " + w.Reason + ": " + w.Message
			}
		}
		if t := st.State.Terminated; t != nil && t.ExitCode != 0 {
			return false, bullpen.EUNAVAILABLE, fmt.Sprintf("%s exited %d: %s", st.Name, t.ExitCode, t.Message)
		}
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == container && st.State.Running != nil {
			return true, "", ""
		}
	}
	return false, "", ""
}

func podSummary(pod *corev1.Pod) string {
	if pod == nil {
		return "no pod"
	}
	s := "phase " + string(pod.Status.Phase)
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += "; " + c.Message
		}
	}
	return s
}

// Stop deletes the Pod and waits for it to be gone; the Secret, the claim
// and the policy stay.
func (d *Driver) Stop(ctx context.Context, id string) error {
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	d.setStopping(r.Info.ID, true)
	defer d.setStopping(r.Info.ID, false)
	// The record says stopped before the Pod goes, so that no replica's
	// watch takes the deletion for a loss.
	if r.Info.State != sandbox.StateStopped {
		if err := d.update(ctx, r.Info.ID, func(in *sandbox.Info) { in.State = sandbox.StateStopped }); err != nil {
			return err
		}
	}
	d.dropBridges(r.Info.ID)
	if err := d.deletePod(ctx, r.Info.ID); err != nil {
		return err
	}
	if r.Info.State != sandbox.StateStopped {
		d.emit(sandbox.EventStopped, r.Info.ID, "")
	}
	return nil
}

// Start recreates the Pod of a stopped sandbox, on the same claim.
func (d *Driver) Start(ctx context.Context, id string) error {
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	if r.Info.State == sandbox.StateRunning {
		return nil
	}
	image, err := d.podImage(r)
	if err != nil {
		return err
	}
	if err := d.waitPodGone(ctx, r.Info.ID); err != nil {
		return err
	}
	if _, err := d.c.CoreV1().Pods(d.ns).Create(ctx, d.podObject(r, image), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube: create the pod of %s: %w", r.Info.ID, err)
	}
	if err := d.waitRunning(ctx, r.Info.ID); err != nil {
		return err
	}
	now := d.cfg.Sandbox.Now()
	if err := d.update(ctx, r.Info.ID, func(in *sandbox.Info) { in.State, in.StartedAt, in.LastActivity = sandbox.StateRunning, now, now }); err != nil {
		return err
	}
	d.emit(sandbox.EventStarted, r.Info.ID, "")
	return nil
}

// deletePod deletes the sandbox's Pod and waits until it is gone (its
// processes ended, its claim free for the next Pod).
func (d *Driver) deletePod(ctx context.Context, id string) error {
	err := d.c.CoreV1().Pods(d.ns).Delete(ctx, objName(id), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kube: delete the pod of %s: %w", id, err)
	}
	return d.waitPodGone(ctx, id)
}

func (d *Driver) waitPodGone(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.GracePeriod+time.Minute)
	defer cancel()
	for {
		_, err := d.c.CoreV1().Pods(d.ns).Get(ctx, objName(id), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube: the pod of %s is still there: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Terminate deletes every object of the sandbox and waits for its Pod to
// be gone.
func (d *Driver) Terminate(ctx context.Context, id string) error {
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	d.setStopping(r.Info.ID, true)
	// As for Stop: other replicas must not see a loss.
	err = d.update(ctx, r.Info.ID, func(in *sandbox.Info) { in.State = sandbox.StateTerminated })
	if err != nil && !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		d.setStopping(r.Info.ID, false)
		return err
	}
	d.dropBridges(r.Info.ID)
	if err := d.deleteAll(ctx, r.Info.ID); err != nil {
		d.setStopping(r.Info.ID, false)
		return err
	}
	d.drop(r.Info.ID)
	// Its processes end with the Pod: wait for that, as locally.
	if err := d.waitPodGone(ctx, r.Info.ID); err != nil {
		return err
	}
	d.emit(sandbox.EventTerminated, r.Info.ID, "")
	return nil
}

// TerminateAll terminates every sandbox of the office.
func (d *Driver) TerminateAll(ctx context.Context) error {
	list, err := d.List(ctx, nil)
	if err != nil {
		return err
	}
	var first error
	for _, in := range list {
		if err := d.Terminate(ctx, in.ID); err != nil && first == nil && !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			first = err
		}
	}
	return first
}
