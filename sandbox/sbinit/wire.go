package sbinit

import (
	"encoding/base64"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A minimal JSON codec for the few shapes init reads (Config, Request) and
// writes (Reply). The host uses encoding/json; init does not, because
// encoding/json (with reflect and fmt) costs every sandbox tens of KiB of
// memory. Unknown fields are skipped, as encoding/json would.

var errSyntax = errors.New("bad JSON")

type decoder struct {
	b   []byte
	i   int
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errSyntax
	}
	d.i = len(d.b)
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) eat(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) lit(s string) bool {
	d.ws()
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// object calls field for each key; field must consume the value.
func (d *decoder) object(field func(key string)) {
	if d.lit("null") {
		return
	}
	if !d.eat('{') {
		d.fail()
		return
	}
	if d.eat('}') {
		return
	}
	for d.err == nil {
		k := d.str()
		if !d.eat(':') {
			d.fail()
			return
		}
		field(k)
		if d.eat(',') {
			continue
		}
		if !d.eat('}') {
			d.fail()
		}
		return
	}
}

// array calls elem for each element; elem must consume it.
func (d *decoder) array(elem func()) {
	if d.lit("null") {
		return
	}
	if !d.eat('[') {
		d.fail()
		return
	}
	if d.eat(']') {
		return
	}
	for d.err == nil {
		elem()
		if d.eat(',') {
			continue
		}
		if !d.eat(']') {
			d.fail()
		}
		return
	}
}

func (d *decoder) str() string {
	if d.lit("null") {
		return ""
	}
	if !d.eat('"') {
		d.fail()
		return ""
	}
	start := d.i
	for d.i < len(d.b) { // fast path: no escapes
		c := d.b[d.i]
		if c == '"' {
			d.i++
			return string(d.b[start : d.i-1])
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.i++
	}
	out := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out)
		case c < 0x20:
			d.fail()
			return ""
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			break
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := d.hex4()
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					if r2 = d.hex4(); utf16.DecodeRune(r, r2) == utf8.RuneError {
						d.i, r2 = save, -1
					}
				}
				if r2 >= 0 {
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			d.fail()
			return ""
		}
	}
	d.fail()
	return ""
}

func (d *decoder) hex4() rune {
	if d.i+4 > len(d.b) {
		d.fail()
		return 0
	}
	n, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 32)
	if err != nil {
		d.fail()
		return 0
	}
	d.i += 4
	return rune(n)
}

func (d *decoder) int() int64 {
	d.ws()
	j := d.i
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(string(d.b[d.i:j]), 10, 64)
	if err != nil {
		d.fail()
		return 0
	}
	d.i = j
	return n
}

func (d *decoder) boolean() bool {
	switch {
	case d.lit("true"):
		return true
	case d.lit("false"), d.lit("null"):
		return false
	}
	d.fail()
	return false
}

func (d *decoder) strs() []string {
	var out []string
	d.array(func() { out = append(out, d.str()) })
	return out
}

// skip consumes any value.
func (d *decoder) skip() {
	switch c := d.peek(); {
	case c == '{':
		d.object(func(string) { d.skip() })
	case c == '[':
		d.array(d.skip)
	case c == '"':
		d.str()
	case c == 't' || c == 'f':
		d.boolean()
	case c == 'n':
		if !d.lit("null") {
			d.fail()
		}
	default: // a number
		j := d.i
		for j < len(d.b) && (d.b[j] >= '0' && d.b[j] <= '9' || d.b[j] == '-' || d.b[j] == '+' || d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E') {
			j++
		}
		if j == d.i {
			d.fail()
		}
		d.i = j
	}
}

func (d *decoder) end() error {
	d.ws()
	if d.err == nil && d.i != len(d.b) {
		d.err = errSyntax
	}
	return d.err
}

func decodeRequest(b []byte, r *Request) error {
	d := &decoder{b: b}
	d.object(func(k string) {
		switch k {
		case "op":
			r.Op = d.str()
		case "cmd":
			r.Cmd = d.strs()
		case "env":
			r.Env = d.strs()
		case "dir":
			r.Dir = d.str()
		case "timeout":
			r.Timeout = d.int()
		case "stdin":
			r.Stdin = d.boolean()
		default:
			d.skip()
		}
	})
	return d.end()
}

func decodeConfig(b []byte, c *Config) error {
	d := &decoder{b: b}
	d.object(func(k string) {
		switch k {
		case "version":
			c.Version = int(d.int())
		case "rootfs":
			c.Rootfs = d.str()
		case "hostname":
			c.Hostname = d.str()
		case "binds":
			d.array(func() {
				var bm Bind
				d.object(func(k string) {
					switch k {
					case "src":
						bm.Src = d.str()
					case "dst":
						bm.Dst = d.str()
					default:
						d.skip()
					}
				})
				c.Binds = append(c.Binds, bm)
			})
		case "uid":
			c.UID = int(d.int())
		case "gid":
			c.GID = int(d.int())
		case "key":
			c.Key = d.str()
		case "stage":
			c.Stage = d.str()
		case "seccomp":
			s := d.str()
			var err error
			if c.Seccomp, err = base64.StdEncoding.DecodeString(s); err != nil {
				d.fail()
			}
		default:
			d.skip()
		}
	})
	return d.end()
}

// appendJSON encodes r as encoding/json would (omitempty fields left out).
func (r *Reply) appendJSON(b []byte) []byte {
	b = append(b, '{')
	sep := func() {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
	}
	if r.Hello != "" {
		b = append(b, `"hello":`...)
		b = appendString(b, r.Hello)
	}
	if r.Pid != 0 {
		sep()
		b = append(b, `"pid":`...)
		b = strconv.AppendInt(b, int64(r.Pid), 10)
	}
	if r.Exit != nil {
		sep()
		b = append(b, `"exit":{"code":`...)
		b = strconv.AppendInt(b, int64(r.Exit.Code), 10)
		if r.Exit.Signal != "" {
			b = append(b, `,"signal":`...)
			b = appendString(b, r.Exit.Signal)
		}
		if r.Exit.TimedOut {
			b = append(b, `,"timed_out":true`...)
		}
		b = append(b, '}')
	}
	if r.Error != "" {
		sep()
		b = append(b, `"error":`...)
		b = appendString(b, r.Error)
	}
	if r.NotFound {
		sep()
		b = append(b, `"not_found":true`...)
	}
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
