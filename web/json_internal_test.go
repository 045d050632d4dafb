package web

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A value the server cannot use is named as a value, not as malformed
// JSON; only what is not JSON is called malformed.
func TestJSONProblemsNameValues(t *testing.T) {
	for body, want := range map[string]string{
		`{"memory":"100Xi"}`:      `invalid value: size "100Xi" is not a number`,
		`{"timeout":"soon"}`:      `invalid value: duration "soon" is not valid`,
		`{"network":"sometimes"}`: `invalid value: network "sometimes" is not`,
		`{"cpu":"two"}`:           `field "cpu" has the wrong type`,
		`{"imgae":"host"}`:        `unknown field "imgae"`,
		`{"image":"host"`:         `malformed JSON: the body ends too early`,
		`{"image":"host",}`:       `malformed JSON: syntax error at byte`,
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(body)))
		dec.DisallowUnknownFields()
		var in specIn
		err := dec.Decode(&in)
		if err == nil {
			t.Errorf("%s decoded", body)
			continue
		}
		if got := jsonProblem(err); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start %q", body, got, want)
		}
	}
}
