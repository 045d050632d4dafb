package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// SandboxSpec is the body of a sandbox create. Sizes take a number of
// bytes or a string with a unit ("512Mi", "1G"); durations take seconds
// or a Go duration string ("90s", "1h"). Zero values take the server's
// defaults.
type SandboxSpec struct {
	Image       string            `json:"image,omitempty"`
	Name        string            `json:"name,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Workdir     string            `json:"workdir,omitempty"`
	CPU         float64           `json:"cpu,omitempty"`
	Memory      any               `json:"memory,omitempty"`
	Pids        int64             `json:"pids,omitempty"`
	Disk        any               `json:"disk,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Secrets     []Secret          `json:"secrets,omitempty"`
	Timeout     any               `json:"timeout,omitempty"`
	IdleTimeout any               `json:"idle_timeout,omitempty"`
	IdleAction  string            `json:"idle_action,omitempty"`
	Network     *NetworkPolicy    `json:"network,omitempty"`
	Ports       []int             `json:"ports,omitempty"`
}

// Secret is injected into a sandbox as an env variable, or as a file when
// File is set; its value is never shown again.
type Secret struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	File  string `json:"file,omitempty"`
}

// NetworkPolicy is a sandbox's egress: nothing (nil or empty, the
// default), or the IPv4 CIDRs and domains listed.
type NetworkPolicy struct {
	Allow   []string `json:"allow,omitempty"`
	Domains []string `json:"domains,omitempty"`
}

// Sandbox is a sandbox as the API shows it. Durations are in seconds.
type Sandbox struct {
	ID            string            `json:"id"`
	Name          string            `json:"name,omitempty"`
	OwnerID       int64             `json:"owner_id"`
	Tags          map[string]string `json:"tags"`
	Image         string            `json:"image"`
	State         string            `json:"state"`
	Workdir       string            `json:"workdir"`
	CPU           float64           `json:"cpu"`
	MemoryBytes   int64             `json:"memory_bytes"`
	Pids          int64             `json:"pids"`
	DiskBytes     int64             `json:"disk_bytes"`
	DiskUnbounded bool              `json:"disk_unbounded"`
	Inodes        int64             `json:"inodes,omitempty"`
	NoFile        int64             `json:"nofile,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	SecretNames   []string          `json:"secret_names,omitempty"`
	Timeout       float64           `json:"timeout"`
	IdleTimeout   float64           `json:"idle_timeout"`
	IdleAction    string            `json:"idle_action"`
	Network       NetworkPolicy     `json:"network"`
	AllowedCIDRs  []string          `json:"allowed_cidrs,omitempty"`
	Ports         []Port            `json:"ports"`
	CreatedAt     time.Time         `json:"created_at"`
	StartedAt     *time.Time        `json:"started_at,omitempty"`
	ExpiresAt     *time.Time        `json:"expires_at,omitempty"`
	LastActivity  time.Time         `json:"last_activity"`
	Usage         *Usage            `json:"usage,omitempty"`
}

// Port is a published port: connections to HostAddr reach the sandbox's
// 127.0.0.1:Port.
type Port struct {
	Port     int    `json:"port"`
	HostAddr string `json:"host_addr"`
}

// Usage is a sandbox's resource usage.
type Usage struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MemoryBytes int64   `json:"memory_bytes"`
	Pids        int64   `json:"pids"`
}

// CreateSandbox creates and starts a sandbox.
func (c *Client) CreateSandbox(ctx context.Context, spec SandboxSpec) (Sandbox, error) {
	return send[Sandbox](ctx, c, http.MethodPost, "/sandboxes", spec)
}

// Sandbox returns a sandbox by ID or name.
func (c *Client) Sandbox(ctx context.Context, id string) (Sandbox, error) {
	return get[Sandbox](ctx, c, p("/sandboxes/%v", id), nil)
}

// Sandboxes lists the caller's sandboxes (an admin's: all) whose tags
// include every one in tags, with usage when stats is set.
func (c *Client) Sandboxes(ctx context.Context, tags map[string]string, stats bool) ([]Sandbox, error) {
	q := url.Values{}
	for k, v := range tags {
		q.Add("tag", k+"="+v)
	}
	if stats {
		q.Set("stats", "true")
	}
	return list[Sandbox](ctx, c, "/sandboxes", q)
}

// TerminateSandbox ends a sandbox and deletes its filesystem.
func (c *Client) TerminateSandbox(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, p("/sandboxes/%v", id), nil, nil, nil)
}

// Lifecycle actions of SandboxAction.
const (
	ActionPause  = "pause"  // freeze every process
	ActionResume = "resume" // thaw a paused sandbox
	ActionStop   = "stop"   // end the processes, keep the filesystem
	ActionStart  = "start"  // start a stopped sandbox again
)

// SandboxAction pauses, resumes, stops or starts a sandbox and returns it
// after the change.
func (c *Client) SandboxAction(ctx context.Context, id, action string) (Sandbox, error) {
	return send[Sandbox](ctx, c, http.MethodPost, p("/sandboxes/%v/%v", id, action), nil)
}

// SandboxStats returns a sandbox's current usage.
func (c *Client) SandboxStats(ctx context.Context, id string) (Usage, error) {
	return get[Usage](ctx, c, p("/sandboxes/%v/stats", id), nil)
}

// Snapshot saves a sandbox's filesystem as an image named name and
// returns the name a create starts from (a member's snapshots are named
// "handle/name"), or the image's ID where the server names none.
func (c *Client) Snapshot(ctx context.Context, id, name string) (string, error) {
	out, err := send[struct {
		Image string `json:"image"`
		Name  string `json:"name"`
	}](ctx, c, http.MethodPost, p("/sandboxes/%v/snapshot", id), map[string]string{"name": name})
	if out.Name != "" {
		return out.Name, err
	}
	return out.Image, err
}

// Ports lists a sandbox's published ports.
func (c *Client) Ports(ctx context.Context, id string) ([]Port, error) {
	return list[Port](ctx, c, p("/sandboxes/%v/ports", id), nil)
}

// PublishPort makes the sandbox's 127.0.0.1:port reachable from the host.
func (c *Client) PublishPort(ctx context.Context, id string, port int) (Port, error) {
	return send[Port](ctx, c, http.MethodPost, p("/sandboxes/%v/ports", id), map[string]int{"port": port})
}

// RevokePort stops publishing a port.
func (c *Client) RevokePort(ctx context.Context, id string, port int) error {
	return c.call(ctx, http.MethodDelete, p("/sandboxes/%v/ports/%v", id, port), nil, nil, nil)
}

// Image is a sandbox image the token's member may use.
type Image struct {
	ID      string    `json:"id"`
	Names   []string  `json:"names,omitempty"`
	Layers  []string  `json:"layers"`
	Env     []string  `json:"env,omitempty"`
	WorkDir string    `json:"workdir,omitempty"`
	Base    string    `json:"base,omitempty"`
	Created time.Time `json:"created"`
}

// Images lists the images the token's member may create sandboxes from.
func (c *Client) Images(ctx context.Context) ([]Image, error) {
	return list[Image](ctx, c, "/images", nil)
}
