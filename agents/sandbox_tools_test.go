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
	var def *toolDef
	for i := range toolDefs {
		if toolDefs[i].name == ToolSandboxExec {
			def = toolDefs[i]
		}
	}
	if def == nil {
		t.Fatal("no sandbox_exec tool")
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(def.params), &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["network"]; ok || strings.Contains(def.desc, "network is true") {
		t.Errorf("sandbox_exec still offers a network switch: %s / %s", def.params, def.desc)
	}
	box := newFakeBox()
	e := &turnEnv{s: &Service{cfg: Config{Sandboxes: box}}, agent: bullpen.Member{ID: 7, Handle: "eng"}}
	_, err := sandboxExec(context.Background(), e, json.RawMessage(`{"command":"curl example.com","network":true}`))
	if !bullpen.IsCode(err, bullpen.EINVALID) || len(box.execs) != 0 {
		t.Errorf("sandbox_exec with network:true = %v, ran %q; want invalid and nothing run", err, box.execs)
	}
	if _, err := sandboxExec(context.Background(), e, json.RawMessage(`{"command":"true"}`)); err != nil || len(box.execs) != 1 {
		t.Errorf("sandbox_exec = %v, ran %q", err, box.execs)
	}
}
