package bullpen

import (
	"encoding/json"
	"testing"
)

// names is EventNames over fixed handles.
type names map[int64]string

func (n names) MemberHandle(id int64) string             { return n[id] }
func (n names) ChannelName(int64) (name string, dm bool) { return "", false }

// TestExecLines: a command's timeline lines say how it ended; a terminal
// session reads as one (opened, closed by its user), not as its shell
// command killed.
func TestExecLines(t *testing.T) {
	code := func(c int) *int { return &c }
	tests := []struct {
		name string
		typ  string
		x    SandboxExecEvent
		want string
	}{
		{name: "a command", typ: EventSandboxExecFinished,
			x:    SandboxExecEvent{Command: "df -h", ExitCode: code(0), DurationMS: 12},
			want: "@ann ran `df -h` → exit 0 in 12 ms"},
		{name: "a command killed", typ: EventSandboxExecFinished,
			x:    SandboxExecEvent{Command: "sleep 9", ExitCode: code(137), Signal: "SIGKILL", DurationMS: 1500},
			want: "@ann ran `sleep 9` → killed by SIGKILL in 1.5 s"},
		{name: "a terminal opened", typ: EventSandboxExecStarted,
			x:    SandboxExecEvent{Command: "bash -l", PTY: true},
			want: "@ann opened a terminal in box"},
		{name: "a terminal closed by its user", typ: EventSandboxExecFinished,
			x:    SandboxExecEvent{Command: "bash -l", PTY: true, Ended: true, ExitCode: code(137), Signal: "SIGKILL", DurationMS: 125_400},
			want: "@ann closed a terminal in box after 2 min 5 s"},
		{name: "a terminal's shell exited", typ: EventSandboxExecFinished,
			x:    SandboxExecEvent{Command: "bash -l", PTY: true, ExitCode: code(0), DurationMS: 3000},
			want: "@ann's terminal in box ended: exit 0 after 3.0 s"},
		{name: "a terminal killed", typ: EventSandboxExecFinished,
			x:    SandboxExecEvent{Command: "bash -l", PTY: true, ExitCode: code(137), Signal: "SIGKILL", DurationMS: 3000},
			want: "@ann's terminal in box ended: killed by SIGKILL after 3.0 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.x.Name, tt.x.ID, tt.x.ExecID, tt.x.ByID = "box", "sb_1", "x_1", 7
			raw, err := json.Marshal(tt.x)
			if err != nil {
				t.Fatal(err)
			}
			line, err := LineOf(Event{Seq: 1, Type: tt.typ, Payload: raw}, names{7: "ann"})
			if err != nil || line.Text != tt.want {
				t.Errorf("line = %q, %v; want %q", line.Text, err, tt.want)
			}
		})
	}
}
