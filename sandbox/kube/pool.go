package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The warm pool: per template, a few pre-started sandboxes-to-be (Pod,
// workspace claim, NetworkPolicy and Secret, all as a cold create makes
// them) whose sandbox id is minted when they are made. They carry
// LabelPool, and their Secret holds the token but no record. A create
// whose spec matches a template claims one by an update of its Pod
// conditional on the Pod's resourceVersion (so two replicas never claim
// the same one), then writes the record into the Secret: every name the
// driver derives from the id (objName) holds for a claimed member as for
// a cold one.
const (
	// LabelPool marks a pool member's objects; its value is the template's
	// hash. A claim removes it from the Pod.
	LabelPool = "bullpen.dev/pool"
	// AnnotationPoolSince is when a pool member was made (RFC 3339).
	AnnotationPoolSince = "bullpen.dev/pool-since"
	// AnnotationClaimed is when a replica claimed a pool Pod (RFC 3339):
	// until its record is written, reconciliation leaves it alone for
	// twice the start timeout.
	AnnotationClaimed = "bullpen.dev/claimed"
)

// placeholderID stands for the id in the objects a template's hash is
// taken of.
const placeholderID = "sb_0000000000000000"

// template is what a pool member fixes at its start: the resolved record
// of a spec with only an image (default limits, workdir and network none)
// and the container image.
type template struct {
	hash  string
	image string
	rec   *record
}

// pool is the driver's warm pool configuration and its refill signal.
type pool struct {
	size      int
	templates []template
	kick      chan struct{} // a refill is due
}

// newPool resolves the configured images into templates.
func (d *Driver) newPool(size int, images []string) (*pool, error) {
	p := &pool{size: size, kick: make(chan struct{}, 1)}
	if size <= 0 {
		return p, nil
	}
	if len(images) == 0 {
		images = []string{imageHost}
	}
	for _, ref := range images {
		r, _, err := d.newRecord(sandbox.Spec{Image: ref})
		if err != nil {
			return nil, fmt.Errorf("kube: warm pool image %q: %w", ref, err)
		}
		image, err := d.imageOf(r.Info.Image)
		if err != nil {
			return nil, fmt.Errorf("kube: warm pool image %q: %w", ref, err)
		}
		r.Info.ID = placeholderID
		p.templates = append(p.templates, template{hash: d.templateHash(r, image), image: image, rec: r})
	}
	return p, nil
}

// templateHash is a hash of the specs of the Pod, the claim and the
// NetworkPolicy the record would get, so that any change to what a Pod
// fixes at start (limits, image, network, workdir, and the driver's own
// settings and code) makes a new template, and members of the old one
// are retired.
func (d *Driver) templateHash(r *record, image string) string {
	c := r.clone()
	c.Info.ID = placeholderID
	h := sha256.New()
	if err := json.NewEncoder(h).Encode([]any{d.podObject(c, image).Spec, d.claimObject(c).Spec, d.policyObject(c).Spec}); err != nil {
		panic(err) // plain data
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// poolable says whether a spec could come from the pool: no environment
// and no secrets (they are fixed in a Pod at its start); the template
// hash decides the rest.
func poolable(sp sandbox.Spec) bool {
	return len(sp.Env) == 0 && len(sp.Secrets) == 0 && len(sp.Mounts) == 0 && len(sp.Bridges) == 0
}

func (p *pool) template(hash string) *template {
	for i := range p.templates {
		if p.templates[i].hash == hash {
			return &p.templates[i]
		}
	}
	return nil
}

// kickFill asks the pool loop for a refill.
func (d *Driver) kickFill() {
	select {
	case d.pool.kick <- struct{}{}:
	default:
	}
}

func (d *Driver) poolSelector(hash string) string {
	if hash == "" {
		return d.selector("") + "," + LabelPool
	}
	return d.selector("") + "," + LabelPool + "=" + hash
}

// claim takes a pool member for a record whose spec is poolable: its
// Pod stops being a pool member by an update conditional on its
// resourceVersion. It returns the member's sandbox id, or "" when no
// member could be had (then the create is cold).
func (d *Driver) claim(ctx context.Context, r *record, image string) string {
	if d.pool.size <= 0 {
		return ""
	}
	hash := d.templateHash(r, image)
	if d.pool.template(hash) == nil {
		return ""
	}
	defer d.kickFill()
	l, err := d.c.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{LabelSelector: d.poolSelector(hash)})
	if err != nil {
		d.log.Warn("kube: list the warm pool", "err", err)
		return ""
	}
	pods := candidates(l.Items)
	now := d.cfg.Sandbox.Now().UTC().Format(time.RFC3339Nano)
	for i := range pods {
		p := pods[i].DeepCopy()
		delete(p.Labels, LabelPool)
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[AnnotationClaimed] = now
		_, err := d.c.CoreV1().Pods(d.ns).Update(ctx, p, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return p.Labels[LabelSandbox]
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			continue // another replica claimed it, or it was retired
		default:
			d.log.Warn("kube: claim a warm pool pod", "pod", p.Name, "err", err)
			return ""
		}
	}
	return ""
}

// candidates are the pool Pods that can be claimed, running ones first,
// then the oldest.
func candidates(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Labels[LabelSandbox] != "" && !broken(&p) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, _, _ := podRunning(&out[i])
		rj, _, _ := podRunning(&out[j])
		if ri != rj {
			return ri
		}
		return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp)
	})
	return out
}

// isPoolSecret says whether a Secret is an unclaimed pool member's: a
// token, no record.
func isPoolSecret(sec *corev1.Secret) bool {
	_, rec := sec.Annotations[AnnotationRecord]
	return sec.Labels[LabelPool] != "" && !rec
}

// broken says whether a Pod will never run.
func broken(p *corev1.Pod) bool {
	_, _, why := podRunning(p)
	return why != ""
}
