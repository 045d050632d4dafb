package podinit

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
)

// Usage is what "stats" prints, as JSON: the sandbox container's cgroup
// usage, read from inside it (cgroup v2 or v1, whichever is mounted).
// The driver turns it into a sandbox.Usage (same field names).
type Usage struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MemoryBytes int64   `json:"memory_bytes"`
	Pids        int64   `json:"pids"`
}

// cgroupRoot is where the container's cgroups are mounted.
var cgroupRoot = "/sys/fs/cgroup"

func stats(w io.Writer) error {
	var u Usage
	if v, ok := readInt(cgroupRoot + "/memory.current"); ok { // v2
		u.MemoryBytes = v
		u.Pids, _ = readInt(cgroupRoot + "/pids.current")
		if usec, ok := keyed(cgroupRoot+"/cpu.stat", "usage_usec"); ok {
			u.CPUSeconds = float64(usec) / 1e6
		}
	} else {
		u.MemoryBytes, _ = readInt(cgroupRoot + "/memory/memory.usage_in_bytes")
		u.Pids, _ = readInt(cgroupRoot + "/pids/pids.current")
		for _, p := range []string{"/cpuacct/cpuacct.usage", "/cpu,cpuacct/cpuacct.usage"} {
			if ns, ok := readInt(cgroupRoot + p); ok {
				u.CPUSeconds = float64(ns) / 1e9
				break
			}
		}
	}
	return json.NewEncoder(w).Encode(u)
}

func readInt(p string) (int64, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// keyed reads "key value" lines.
func keyed(p, key string) (int64, bool) {
	f, err := os.Open(p)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
