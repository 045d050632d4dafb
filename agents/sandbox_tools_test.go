package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// sandbox_exec has no per-command network switch (a command has the
// role's network, and with any network it needs an approval): the schema
// offers none and a call that asks for one is refused before it runs.
func TestSandboxExecHasNoNetworkSwitch(t *testing.T) {
	box := newFakeBox()
	reg, err := builtinTools(Config{Sandboxes: box})
	if err != nil {
		t.Fatal(err)
	}
	def := reg.Lookup(bullpen.ToolSandboxExec)
	if def == nil {
		t.Fatal("no sandbox_exec tool")
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(def.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["network"]; ok || strings.Contains(def.Description, "network is true") {
		t.Errorf("sandbox_exec still offers a network switch: %s / %s", def.Parameters, def.Description)
	}
	c := &Call{Member: bullpen.Member{ID: 7, Handle: "eng"}, Args: json.RawMessage(`{"command":"curl example.com","network":true}`)}
	_, err = def.Run(context.Background(), c)
	if !bullpen.IsCode(err, bullpen.EINVALID) || len(box.execs) != 0 {
		t.Errorf("sandbox_exec with network:true = %v, ran %q; want invalid and nothing run", err, box.execs)
	}
	c.Args = json.RawMessage(`{"command":"true"}`)
	if _, err := def.Run(context.Background(), c); err != nil || len(box.execs) != 1 {
		t.Errorf("sandbox_exec = %v, ran %q", err, box.execs)
	}
}
