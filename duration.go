package bullpen

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "30s", "10m" in role files and
// stored specs.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "30s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("bullpen: duration must be a string such as \"30s\"")
		}
		*d = Duration(n)
		return nil
	}
	return d.parse(s)
}

// UnmarshalYAML reads "30s", "10m".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if d.parse(s) != nil {
		// Shaped like yaml's own type errors, so the role error names the field.
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal !!str `%s` into duration(30s,10m)", n.Line, s)}}
	}
	return nil
}

func (d *Duration) parse(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 30s or 10m", s)
	}
	*d = Duration(v)
	return nil
}

// Timeouts bound how long an agent waits for its model. Zero fields mean
// the office default (agents.Config.Timeouts, from the environment), then the
// built-in one.
type Timeouts struct {
	Connect   Duration `yaml:"connect" json:"connect,omitempty"`       // opening the connection
	FirstByte Duration `yaml:"first_byte" json:"first_byte,omitempty"` // request sent → first byte of the answer
	Idle      Duration `yaml:"idle" json:"idle,omitempty"`             // a silence inside a streaming answer
	Turn      Duration `yaml:"turn" json:"turn,omitempty"`             // the whole turn, every model call and tool included
	// Notice is how long a model call may wait before a notice says so
	// in the channel.
	Notice Duration `yaml:"notice" json:"notice,omitempty"`
}

// Or returns t with its zero fields taken from def.
func (t Timeouts) Or(def Timeouts) Timeouts {
	pick := func(a, b Duration) Duration {
		if a > 0 {
			return a
		}
		return b
	}
	return Timeouts{Connect: pick(t.Connect, def.Connect), FirstByte: pick(t.FirstByte, def.FirstByte),
		Idle: pick(t.Idle, def.Idle), Turn: pick(t.Turn, def.Turn), Notice: pick(t.Notice, def.Notice)}
}
