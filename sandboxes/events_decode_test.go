package sandboxes

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// TestEventDecoders round-trips each sandbox event payload through its
// typed decoder and checks that a decoder refuses another event type.
func TestEventDecoders(t *testing.T) {
	code := 3
	tests := []struct {
		typ     string
		payload any
		decode  func(bullpen.Event) (any, error)
	}{
		{bullpen.EventSandboxState, bullpen.SandboxStateEvent{ID: "sb_1", OwnerID: 5, State: "running", Event: "started"},
			func(ev bullpen.Event) (any, error) { return bullpen.SandboxStateOf(ev) }},
		{bullpen.EventSandboxExecFinished, bullpen.SandboxExecEvent{ID: "sb_1", ExecID: "ex_1", Command: "ls", ExitCode: &code},
			func(ev bullpen.Event) (any, error) { return bullpen.SandboxExecOf(ev) }},
		{bullpen.EventSandboxOutput, bullpen.SandboxOutputEvent{ID: "sb_1", ExecID: "ex_1", Stream: "stdout", Offset: 10, DataB64: []byte{0xff}},
			func(ev bullpen.Event) (any, error) { return bullpen.SandboxOutputOf(ev) }},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			raw, err := json.Marshal(tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.decode(bullpen.Event{Seq: 2, Type: tt.typ, Payload: raw})
			if err != nil || !reflect.DeepEqual(got, tt.payload) {
				t.Errorf("decode(%s) = %+v, %v; want %+v", raw, got, err, tt.payload)
			}
			if _, err := tt.decode(bullpen.Event{Seq: 2, Type: bullpen.EventSandboxCreated + "x", Payload: raw}); !bullpen.IsCode(err, bullpen.EINVALID) {
				t.Errorf("decode(wrong type) err = %v, want EINVALID", err)
			}
		})
	}
}
