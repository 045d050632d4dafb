package kube

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
)

// Labels and annotations on every object the driver makes.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "bullpen"
	LabelOffice    = "bullpen.dev/office"
	LabelSandbox   = "bullpen.dev/sandbox"
	// AnnotationRecord on the Secret holds the sandbox's record (JSON),
	// so that every replica, and this one after a restart, knows it.
	AnnotationRecord = "bullpen.dev/record"
)

// record is what the driver keeps of a sandbox, in its Secret. It never
// holds secret values; they are the Secret's data.
type record struct {
	Info sandbox.Info `json:"info"`
	// Files maps the names of file secrets to their paths.
	Files map[string]string `json:"files,omitempty"`
	// Creating is set until the Pod of a new sandbox first runs: a
	// record left so by a crashed replica is deleted by Reconcile.
	Creating bool `json:"creating,omitempty"`
	// Image is the container image when it is not Info.Image's: a
	// sandbox made from a snapshot (Info.Image "snapshot/N") runs the
	// image of the sandbox the snapshot was taken of.
	Image string `json:"image,omitempty"`
	// Snapshot is the VolumeSnapshot its workspace claim was restored
	// from, if any.
	Snapshot string `json:"snapshot,omitempty"`
	// stopping is set while this replica stops or terminates the Pod, so
	// that the watch does not take its deletion for a loss.
	stopping bool
	// saved is when this replica last wrote its activity into the
	// record (activity.go).
	saved time.Time
	// version is the Secret's resourceVersion the record was read from.
	version string
}

// newID returns a fresh sandbox id, as the local runtime's ("sb_" and 16
// hex digits).
func newID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "sb_" + hex.EncodeToString(b[:])
}

// objName is the name of the sandbox's Pod, Secret and NetworkPolicy
// (the claim adds "-ws"): ids are lower-case hex after "sb_".
func objName(id string) string { return "bullpen-" + strings.TrimPrefix(id, "sb_") }

// secretKey is the Secret data key of a user secret.
func secretKey(name string) string { return "secret." + name }

// labels ties an object to the office and the sandbox.
func (d *Driver) labels(id string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelOffice: d.cfg.Office, LabelSandbox: id}
}

// selector selects every object of the office, or of one sandbox.
func (d *Driver) selector(id string) string {
	s := LabelManagedBy + "=" + ManagedBy + "," + LabelOffice + "=" + d.cfg.Office
	if id != "" {
		s += "," + LabelSandbox + "=" + id
	}
	return s
}

// recordOf reads the record of a sandbox's Secret.
func recordOf(sec *corev1.Secret) (*record, error) {
	raw := sec.Annotations[AnnotationRecord]
	var r record
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Info.ID == "" {
		return nil, fmt.Errorf("kube: secret %s has no readable sandbox record", sec.Name)
	}
	r.version = sec.ResourceVersion
	return &r, nil
}

// encode returns the record as the Secret's annotation value.
func (r *record) encode() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // plain data
	}
	return string(b)
}

// newer reports whether version v is after the record's (resource
// versions are etcd revisions; one that does not parse counts as newer).
func (r *record) newer(v string) bool {
	a, errA := strconv.ParseUint(r.version, 10, 64)
	b, errB := strconv.ParseUint(v, 10, 64)
	return errA != nil || errB != nil || b >= a
}

// clone returns a copy safe to hand out and to change.
func (r *record) clone() *record {
	c := *r
	c.Info.Tags = maps.Clone(r.Info.Tags)
	c.Info.Env = maps.Clone(r.Info.Env)
	c.Files = maps.Clone(r.Files)
	c.Info.Ports = append([]sandbox.PortInfo(nil), r.Info.Ports...)
	c.Info.Mounts = append([]sandbox.Mount(nil), r.Info.Mounts...)
	c.Info.Bridges = append([]sandbox.Bridge(nil), r.Info.Bridges...)
	return &c
}
