package bullpen

import (
	"strconv"
	"strings"
)

// Reserved sandbox tags.
const (
	// SandboxReservedPrefix starts every tag that Bullpen sets itself.
	SandboxReservedPrefix = "bullpen."
	// SandboxOwnerTag holds the owning member's ID.
	SandboxOwnerTag = "bullpen.owner"
	// SandboxAgentTag marks an agent's own workspace sandbox.
	SandboxAgentTag = "bullpen.agent"
	// SandboxNameTag holds a sandbox's name. Names are unique per owner,
	// so they are kept here rather than in the runtime's global name.
	SandboxNameTag = "bullpen.name"
)

// SandboxName returns a sandbox's name: its name tag, or the runtime name
// of a sandbox made before names were per owner.
func SandboxName(runtimeName string, tags map[string]string) string {
	if n := tags[SandboxNameTag]; n != "" {
		return n
	}
	return runtimeName
}

// SandboxOwner returns the member ID recorded in a sandbox's owner tag, 0
// if none.
func SandboxOwner(tags map[string]string) int64 {
	id, _ := strconv.ParseInt(tags[SandboxOwnerTag], 10, 64)
	return id
}

// SandboxUserTags returns a sandbox's tags without the reserved ones.
func SandboxUserTags(tags map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tags {
		if !strings.HasPrefix(k, SandboxReservedPrefix) {
			out[k] = v
		}
	}
	return out
}
