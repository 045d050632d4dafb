package redact

import (
	"io"
	"net/http"
	"strings"
)

// Header redacts every value of h in place.
func (s *Secrets) Header(h http.Header) {
	for _, vs := range h {
		for i, v := range vs {
			vs[i] = s.String(v)
		}
	}
}

// Stream redacts what is written through it to w, also a secret split
// across two writes. It holds back only a tail that could be the start of
// a secret or of a URL's user information, and writes it with the next
// write or on Flush, so a streamed answer is otherwise passed on as it
// comes.
type Stream struct {
	s       *Secrets
	w       io.Writer
	pending string
}

// Stream returns a redacting writer to w. Call Flush at the end.
func (s *Secrets) Stream(w io.Writer) *Stream { return &Stream{s: s, w: w} }

// Write redacts p (with the held-back tail before it) and writes all but
// a new tail that may still grow into a secret. It reports len(p) when
// the write succeeded.
func (st *Stream) Write(p []byte) (int, error) {
	buf := st.s.String(st.pending + string(p))
	keep := st.s.holdback(buf)
	out := buf[:len(buf)-keep]
	st.pending = buf[len(buf)-keep:]
	if out == "" {
		return len(p), nil
	}
	if _, err := io.WriteString(st.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the held-back tail: the stream has ended, so it is no
// secret's start.
func (st *Stream) Flush() error {
	if st.pending == "" {
		return nil
	}
	out := st.s.String(st.pending)
	st.pending = ""
	_, err := io.WriteString(st.w, out)
	return err
}

// Pending reports how many bytes are held back.
func (st *Stream) Pending() int { return len(st.pending) }

// maxUserinfo bounds how long a URL's user information may be while it
// is held back; longer, it is taken for something else.
const maxUserinfo = 512

// holdback is how many bytes at the end of b could begin a secret or a
// URL's user information.
func (s *Secrets) holdback(b string) int {
	keep := 0
	for _, v := range s.values() {
		for k := min(len(v)-1, len(b)); k > keep; k-- {
			if strings.HasSuffix(b, v[:k]) {
				keep = k
				break
			}
		}
	}
	return max(keep, urlTail(b))
}

// urlTail is the length of b's tail from a URL's scheme when the URL's
// authority has not ended yet (it may still turn out to hold a user), or
// when b ends in what may become a scheme's "://".
func urlTail(b string) int {
	from := max(0, len(b)-maxUserinfo)
	seps := []string{"://", `:\/\/`}
	for _, sp := range seps {
		i := strings.LastIndex(b[from:], sp)
		if i < 0 {
			continue
		}
		i += from
		if !strings.ContainsAny(b[i+len(sp):], " \t\r\n/?#@\"'<>\\") { // the authority goes on
			if n := schemeFrom(b, i); n > 0 {
				return n
			}
		}
	}
	for _, sp := range seps {
		for k := len(sp) - 1; k > 0; k-- {
			if strings.HasSuffix(b, sp[:k]) {
				if n := schemeFrom(b, len(b)-k); n > 0 {
					return n
				}
			}
		}
	}
	return 0
}

// schemeFrom is the length of b's tail from the scheme that ends at the
// colon at i, 0 when no scheme does.
func schemeFrom(b string, i int) int {
	start := i
	for start > 0 && isSchemeChar(b[start-1]) {
		start--
	}
	if start == i {
		return 0
	}
	return len(b) - start
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}
