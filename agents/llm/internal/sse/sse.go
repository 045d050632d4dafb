// Package sse reads a text/event-stream body as the HTML Living Standard
// defines it: lines end in LF, CRLF or CR; "event:" names the event;
// "data:" lines join with a newline; a line starting with ":" is a comment
// (a keep-alive); a blank line dispatches the event; an event left
// unterminated when the stream ends is dropped. The model providers read
// their streaming answers with it.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEvent bounds one event's size: a stream that never dispatches
// must not grow without end. It is generous (a single tool call's
// arguments arrive as one event from some servers).
const DefaultMaxEvent = 32 << 20

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the "event:" field, empty when the server sent none.
	Type string
	// Data is the "data:" lines joined with "\n", without a trailing one.
	Data []byte
}

// Reader decodes events from a stream.
type Reader struct {
	r   *bufio.Reader
	max int
	// cr is set after a line ended in CR, so an LF that follows is
	// part of that line ending (CRLF), not a blank line of its own.
	cr bool
}

// NewReader returns a Reader over r with DefaultMaxEvent.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10), max: DefaultMaxEvent}
}

// ErrTooLarge is returned for an event longer than the reader's limit.
var ErrTooLarge = errors.New("sse: event too large")

// Next returns the next event. At the end of the stream it returns io.EOF
// (an unterminated last event is dropped, as the standard says); a read
// error is returned as it came, so timeouts keep their type.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		hasData bool
		size    int
	)
	for {
		line, err := r.line()
		if err != nil {
			return Event{}, err
		}
		if size += len(line); size > r.max {
			return Event{}, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, r.max)
		}
		if len(line) == 0 {
			if hasData {
				return ev, nil
			}
			ev = Event{} // an event without data is not dispatched
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "": // a comment, such as a keep-alive
		case "event":
			ev.Type = string(value)
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			hasData = true
		}
	}
}

// line returns the next line without its ending. A last line without an
// ending is dropped with the event it belongs to: io.EOF.
func (r *Reader) line() ([]byte, error) {
	var out []byte
	for {
		b, err := r.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if r.cr {
			r.cr = false
			if b == '\n' {
				continue // the LF of a CRLF
			}
		}
		switch b {
		case '\n':
			return out, nil
		case '\r':
			r.cr = true
			return out, nil
		}
		if len(out) >= r.max {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, r.max)
		}
		out = append(out, b)
	}
}
