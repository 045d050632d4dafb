package sandbox

import (
	"context"
	"net"
	"path"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// Limits on Spec and ExecRequest values.
const (
	minMemoryBytes = 16 << 20
	minDiskBytes   = 32 << 20
	maxEnvBytes    = 256 << 10 // all keys and values of one env, together
	maxTags        = 64
	maxPorts       = 64
	maxAllow       = 256
	maxArgBytes    = 1 << 20
)

var (
	nameRe   = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
	envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)
	tagKeyRe = regexp.MustCompile(`^[a-zA-Z0-9_./:-]{1,63}$`)
	domainRe = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,62}\.)*[a-zA-Z0-9-]{1,63}$`)
)

func invalid(format string, args ...any) error {
	return bullpen.Errorf(bullpen.EINVALID, format, args...)
}

// normalize validates spec and fills in defaults.
func (m *Manager) normalize(sp Spec) (Spec, error) {
	if sp.Image == "" {
		sp.Image = "host"
	}
	if len(sp.Image) > 512 || strings.ContainsAny(sp.Image, "\x00\n") {
		return sp, invalid("invalid image reference")
	}
	if sp.Name != "" && (!nameRe.MatchString(sp.Name) || strings.HasPrefix(sp.Name, "sb_")) {
		return sp, invalid("invalid name %q: 1-63 of [a-zA-Z0-9_.-], not starting with sb_", sp.Name)
	}
	if len(sp.Tags) > maxTags {
		return sp, invalid("too many tags (max %d)", maxTags)
	}
	for k, v := range sp.Tags {
		if !tagKeyRe.MatchString(k) || len(v) > 256 || strings.IndexByte(v, 0) >= 0 {
			return sp, invalid("invalid tag %q", k)
		}
	}
	if sp.Workdir != "" && (!path.IsAbs(sp.Workdir) || len(sp.Workdir) > 1024 || strings.IndexByte(sp.Workdir, 0) >= 0) {
		return sp, invalid("workdir must be an absolute path")
	}
	if sp.Workdir != "" {
		sp.Workdir = path.Clean(sp.Workdir)
	}
	switch {
	case sp.CPU < 0 || sp.CPU != sp.CPU:
		return sp, invalid("cpu must not be negative")
	case sp.CPU > float64(runtime.NumCPU()):
		return sp, invalid("cpu %.2f exceeds the host's %d cores", sp.CPU, runtime.NumCPU())
	case sp.MemoryBytes < 0, sp.Pids < 0, sp.DiskBytes < 0:
		return sp, invalid("limits must not be negative")
	case sp.MemoryBytes > 0 && sp.MemoryBytes < minMemoryBytes:
		return sp, invalid("memory must be at least %d MiB", minMemoryBytes>>20)
	case sp.Pids > 0 && sp.Pids < 8:
		return sp, invalid("pids must be at least 8")
	case sp.Pids > 1<<22:
		return sp, invalid("pids too large")
	case sp.DiskBytes > 0 && sp.DiskBytes < minDiskBytes:
		return sp, invalid("disk must be at least %d MiB", minDiskBytes>>20)
	case sp.Timeout < 0 || sp.IdleTimeout < 0:
		return sp, invalid("timeouts must not be negative")
	case sp.Timeout > 0 && sp.Timeout < time.Second, sp.IdleTimeout > 0 && sp.IdleTimeout < time.Second:
		return sp, invalid("timeouts must be at least 1s")
	}
	if err := m.checkHostFits(sp); err != nil {
		return sp, err
	}
	if err := m.fillLimits(&sp); err != nil {
		return sp, err
	}
	switch sp.IdleAction {
	case "":
		sp.IdleAction = IdleStop
	case IdleStop, IdlePause, IdleTerminate:
	default:
		return sp, invalid("idle action must be stop, pause or terminate")
	}
	if err := checkEnv(sp.Env); err != nil {
		return sp, err
	}
	seen := map[string]bool{}
	size := 0
	for _, sec := range sp.Secrets {
		size += len(sec.Name) + len(sec.Value) + len(sec.File)
		if seen[sec.Name] {
			return sp, invalid("duplicate secret %q", sec.Name)
		}
		seen[sec.Name] = true
		if !envKeyRe.MatchString(sec.Name) {
			return sp, invalid("invalid secret name %q", sec.Name)
		}
		if sec.File == "" && strings.IndexByte(sec.Value, 0) >= 0 {
			return sp, invalid("secret %q contains a NUL byte", sec.Name)
		}
		if sec.File != "" && (!path.IsAbs(sec.File) || path.Clean(sec.File) == "/" || strings.IndexByte(sec.File, 0) >= 0) {
			return sp, invalid("secret %q: file must be an absolute path", sec.Name)
		}
	}
	if size > maxEnvBytes {
		return sp, bullpen.Errorf(bullpen.ETOOLARGE, "secrets too large (max %d KiB)", maxEnvBytes>>10)
	}
	if len(sp.Ports) > maxPorts {
		return sp, invalid("too many ports (max %d)", maxPorts)
	}
	for _, p := range sp.Ports {
		if p < 1 || p > 65535 {
			return sp, invalid("invalid port %d", p)
		}
	}
	if err := checkMounts(sp.Mounts, m.cfg.StateDir, m.runDir); err != nil {
		return sp, err
	}
	if err := checkBridges(sp.Bridges, sp.Ports); err != nil {
		return sp, err
	}
	if len(sp.Network.Allow)+len(sp.Network.Domains) > maxAllow {
		return sp, invalid("too many network allowlist entries (max %d)", maxAllow)
	}
	for _, c := range sp.Network.Allow {
		if _, _, err := parseAllow(c); err != nil {
			return sp, err
		}
	}
	for _, d := range sp.Network.Domains {
		if len(d) > 253 || !domainRe.MatchString(d) {
			return sp, invalid("invalid domain %q", d)
		}
	}
	return sp, nil
}

// parseAllow parses an IPv4 CIDR or address.
func parseAllow(c string) (net.IP, *net.IPNet, error) {
	if !strings.Contains(c, "/") {
		c += "/32"
	}
	ip, n, err := net.ParseCIDR(c)
	if err != nil {
		return nil, nil, invalid("invalid CIDR %q", c)
	}
	if ip.To4() == nil {
		return nil, nil, bullpen.Errorf(bullpen.EUNSUPPORTED, "IPv6 allowlist entries are not supported (%q)", c)
	}
	n.IP = n.IP.To4()
	return ip, n, nil
}

func checkEnv(env map[string]string) error {
	size := 0
	for k, v := range env {
		if !envKeyRe.MatchString(k) {
			return invalid("invalid environment variable name %q", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return invalid("environment variable %s contains a NUL byte", k)
		}
		size += len(k) + len(v) + 2
	}
	if size > maxEnvBytes {
		return bullpen.Errorf(bullpen.ETOOLARGE, "environment too large: %d bytes (max %d KiB)", size, maxEnvBytes>>10)
	}
	return nil
}

// resolveNetwork turns a policy into allowed CIDRs and /etc/hosts entries.
func (m *Manager) resolveNetwork(ctx context.Context, p NetworkPolicy) ([]string, map[string][]string, error) {
	set := map[string]bool{}
	for _, c := range p.Allow {
		_, n, err := parseAllow(c)
		if err != nil {
			return nil, nil, err
		}
		set[n.String()] = true
	}
	hosts := map[string][]string{}
	for _, d := range p.Domains {
		var ips []net.IP
		var err error
		if m.cfg.Resolve != nil {
			ips, err = m.cfg.Resolve(ctx, d)
		} else {
			var addrs []net.IPAddr
			addrs, err = net.DefaultResolver.LookupIPAddr(ctx, d)
			for _, a := range addrs {
				ips = append(ips, a.IP)
			}
		}
		if err != nil {
			return nil, nil, invalid("cannot resolve domain %q: %v", d, err)
		}
		for _, ip := range ips {
			if v4 := ip.To4(); v4 != nil {
				set[v4.String()+"/32"] = true
				hosts[d] = append(hosts[d], v4.String())
			}
		}
		if len(hosts[d]) == 0 {
			return nil, nil, invalid("domain %q has no IPv4 address", d)
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, hosts, nil
}

func checkExec(req *ExecRequest) error {
	if len(req.Cmd) == 0 || req.Cmd[0] == "" {
		return invalid("command is empty")
	}
	if req.PTY != nil {
		cmd, err := ptyCommand(req.Cmd, req.PTY.Rows, req.PTY.Cols)
		if err != nil {
			return err
		}
		req.Cmd, req.PTY = cmd, nil
	}
	size := 0
	for _, a := range req.Cmd {
		if strings.IndexByte(a, 0) >= 0 {
			return invalid("command contains a NUL byte")
		}
		size += len(a)
	}
	if size > maxArgBytes {
		return bullpen.Errorf(bullpen.ETOOLARGE, "command line too large (max %d KiB)", maxArgBytes>>10)
	}
	if req.Timeout < 0 {
		return invalid("timeout must not be negative")
	}
	if req.Workdir != "" && (len(req.Workdir) > 1024 || strings.IndexByte(req.Workdir, 0) >= 0) {
		return invalid("invalid workdir")
	}
	return checkEnv(req.Env)
}

// CheckExec validates an exec request for a driver other than the
// Manager, as Exec does: a PTY request becomes its script(1) wrapper.
func CheckExec(req *ExecRequest) error { return checkExec(req) }
