// Package redact keeps secrets out of everything Bullpen shows, stores or
// logs: model-call records, events, turn views, log lines, Settings test
// results and the model gateway's answers. One function, String, does
// the work; the rest apply it to bytes, headers, streams and slog.
//
// It blanks two things: every configured secret (provider API keys and
// OAuth tokens, the Telegram bot token, the metrics token, the password
// of a base URL), and the user information of any URL
// (https://user:pass@host becomes https://[redacted]@host), configured
// or not.
package redact

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces what is redacted.
const Mask = "[redacted]"

// MinLen is the shortest value treated as a secret: shorter ones would
// blank ordinary words.
const MinLen = 6

// userinfo matches a URL's scheme and user information, also in JSON
// text where the slashes are escaped.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*:(?:\\?/){2})([^\s/?#@"'<>\\]+)@`)

// Secrets is the set of values no view may show. The zero value and nil
// are empty sets that still blank URL user information. Safe for
// concurrent use: Settings adds a provider's key as soon as it reads it.
type Secrets struct {
	mu   sync.RWMutex
	list []string // longest first, so a secret inside another goes second
	max  int
}

// New returns a set holding values.
func New(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// Add adds values; those shorter than MinLen are ignored. A URL adds its
// user information (and its password) instead of itself.
func (s *Secrets) Add(values ...string) {
	if s == nil {
		return
	}
	var add []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if strings.Contains(v, "://") {
			add = append(add, urlSecrets(v)...)
			continue
		}
		add = append(add, v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range add {
		if len(v) < MinLen || contains(s.list, v) {
			continue
		}
		s.list = append(s.list, v)
		// A secret as JSON writes it (quotes, backslashes, <, >, &
		// escaped) is the same secret.
		if j := jsonEscape(v); j != v && !contains(s.list, j) {
			s.list = append(s.list, j)
		}
	}
	sort.SliceStable(s.list, func(i, j int) bool { return len(s.list[i]) > len(s.list[j]) })
	if len(s.list) > 0 {
		s.max = len(s.list[0])
	}
}

// urlSecrets is the user information of a URL and its password.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	out := []string{u.User.String()}
	if p, ok := u.User.Password(); ok {
		out = append(out, p, url.QueryEscape(p))
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// values is a snapshot of the set, longest first.
func (s *Secrets) values() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list
}

// String returns in with every secret of s and every URL's user
// information replaced by Mask. It is the one redaction function.
func (s *Secrets) String(in string) string {
	for _, v := range s.values() {
		if strings.Contains(in, v) {
			in = strings.ReplaceAll(in, v, Mask)
		}
	}
	if strings.Contains(in, ":/") || strings.Contains(in, `:\/`) {
		in = userinfo.ReplaceAllString(in, "${1}"+Mask+"@")
	}
	return in
}

// Bytes is String for bytes; b is returned as is when nothing changed.
func (s *Secrets) Bytes(b []byte) []byte {
	out := s.String(string(b))
	if len(out) == len(b) && out == string(b) {
		return b
	}
	return []byte(out)
}

// Has reports whether in shows anything String would blank.
func (s *Secrets) Has(in string) bool { return s.String(in) != in }

func jsonEscape(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<', '>', '&':
			b.WriteString(`\u00` + strings.ToLower(string("0123456789ABCDEF"[r>>4])+string("0123456789ABCDEF"[r&15])))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
