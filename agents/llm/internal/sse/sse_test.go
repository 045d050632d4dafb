package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r *Reader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestNext(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Event
	}{
		{"one event", "event: ping\ndata: {}\n\n", []Event{{"ping", []byte("{}")}}},
		{"data only", "data: [DONE]\n\n", []Event{{"", []byte("[DONE]")}}},
		{"multi-line data joins with LF", "data: one\ndata:two\ndata:  three\n\n",
			[]Event{{"", []byte("one\ntwo\n three")}}},
		{"comments and keep-alives are skipped", ": OPENROUTER PROCESSING\n\n:\ndata: x\n: mid-event\n\n",
			[]Event{{"", []byte("x")}}},
		{"CRLF and CR line endings", "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
			[]Event{{"a", []byte("1")}, {"b", []byte("2")}}},
		{"an event without data is not dispatched, its name does not leak", "event: lost\n\ndata: kept\n\n",
			[]Event{{"", []byte("kept")}}},
		{"id, retry and unknown fields ignored", "id: 7\nretry: 100\nfoo: bar\ndata: d\n\n",
			[]Event{{"", []byte("d")}}},
		{"empty data line dispatches empty data", "data\n\n", []Event{{"", nil}}},
		{"a colon in the value stays", "data: {\"a\":\"b:c\"}\n\n", []Event{{"", []byte(`{"a":"b:c"}`)}}},
		{"unterminated last event dropped", "data: whole\n\ndata: half", []Event{{"", []byte("whole")}}},
		{"last event without blank line dropped", "data: whole\n\ndata: half\n", []Event{{"", []byte("whole")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte a read as well: a split must not matter.
			for _, src := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(t, NewReader(src))
				if err != io.EOF {
					t.Fatalf("Next() error = %v, want io.EOF at the end", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// A read error (a timeout, a reset connection) is returned as it came,
// so the caller can tell it from the end of the stream.
func TestReadErrorKept(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) || len(got) != 1 || string(got[0].Data) != "a" {
		t.Errorf("events %q, error %v; want one event, then the read error", got, err)
	}
}

// An endless event (no blank line ever) or line stops at the limit
// instead of growing memory.
func TestTooLarge(t *testing.T) {
	for name, in := range map[string]string{
		"long line":  "data: " + strings.Repeat("x", 200),
		"long event": strings.Repeat("data: xxxxxxxxxx\n", 30),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(strings.NewReader(in))
			r.max = 100
			if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
				t.Errorf("Next() error = %v, want ErrTooLarge", err)
			}
		})
	}
}
