package kube

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSettings: ports are published at the Pod's IP and kept in the
// record, a new lifetime counts from now, and a new network policy
// replaces the NetworkPolicy and restarts the Pod with new egress rules.
func TestSettings(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.d.PublishPort(ctx, in.ID, 8000)
	if err != nil || p.HostAddr != "10.1.2.3:8000" {
		t.Errorf("PublishPort = %+v, %v; want the pod's IP", p, err)
	}
	if ps, err := f.d.ListPorts(ctx, in.ID); err != nil || len(ps) != 1 || ps[0].HostAddr != "10.1.2.3:8000" {
		t.Errorf("ListPorts = %+v, %v", ps, err)
	}
	if err := f.d.RevokePort(ctx, in.ID, 8000); err != nil {
		t.Error(err)
	}
	if err := f.d.RevokePort(ctx, in.ID, 8000); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Errorf("RevokePort twice = %v, want not found", err)
	}
	if err := f.d.SetTimeout(ctx, in.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.d.Get(ctx, in.ID); time.Until(g.ExpiresAt) < 59*time.Minute || g.Timeout < time.Hour {
		t.Errorf("after SetTimeout(1h): expires %s, timeout %s", g.ExpiresAt, g.Timeout)
	}
	if err := f.d.SetNetwork(ctx, in.ID, sandbox.NetworkPolicy{Allow: []string{"10.9.0.0/16"}}); err != nil {
		t.Fatal(err)
	}
	np, err := f.c.NetworkingV1().NetworkPolicies(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil || len(np.Spec.Egress) != 1 || np.Spec.Egress[0].To[0].IPBlock.CIDR != "10.9.0.0/16" {
		t.Errorf("network policy after SetNetwork = %+v, %v", np, err)
	}
	pod, err := f.c.CoreV1().Pods(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cmd := pod.Spec.InitContainers[0].Command; len(cmd) != 4 || cmd[3] != "10.9.0.0/16" {
		t.Errorf("netlock of the restarted pod = %v, want the new CIDR", cmd)
	}
	if g, _ := f.d.Get(ctx, in.ID); g.State != sandbox.StateRunning {
		t.Errorf("state after SetNetwork = %s, want running", g.State)
	}
}
