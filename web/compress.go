package web

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
)

// Content codings the server offers, best first.
const (
	encBrotli = "br"
	encGzip   = "gzip"
)

// minCompress is the smallest body worth compressing: below it the
// coding's own framing eats the gain.
const minCompress = 512

// negotiateEncoding picks the coding for an Accept-Encoding header: br
// when the client takes it, else gzip, else "" (identity). A coding given
// q=0 is refused; "*" stands for any coding not named.
func negotiateEncoding(header string) string {
	q := map[string]float64{}
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		weight := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					weight = f
				}
			}
		}
		q[name] = weight
	}
	accepts := func(enc string) bool {
		if w, ok := q[enc]; ok {
			return w > 0
		}
		w, ok := q["*"]
		return ok && w > 0
	}
	for _, enc := range []string{encBrotli, encGzip} {
		if accepts(enc) {
			return enc
		}
	}
	return ""
}

// Writers are pooled: a brotli encoder holds its window (megabytes at
// the levels used here), so one per request would be costly.
var (
	gzipPools  = map[int]*sync.Pool{}
	brotliPool = map[int]*sync.Pool{}
	brotliMu   sync.Mutex
)

// encodingLevel is how hard encodeBody works: files encoded once get
// gzip's best, pages rendered per request a level that costs a
// millisecond or so. Brotli stays at 5 for both: its best (11) takes
// seconds on the terminal library (xterm.js, 490 KB; level 5: about 60
// ms, 113 KB instead of 100 KB), and a file is encoded on its first
// request.
type encodingLevel struct{ brotli, gzip int }

var (
	levelOnce    = encodingLevel{brotli: 5, gzip: gzip.BestCompression}
	levelPerPage = encodingLevel{brotli: 5, gzip: 6}
)

func writerPool(enc string, level int) *sync.Pool {
	brotliMu.Lock()
	defer brotliMu.Unlock()
	pools := brotliPool
	if enc == encGzip {
		pools = gzipPools
	}
	p, ok := pools[level]
	if !ok {
		p = &sync.Pool{New: func() any {
			if enc == encGzip {
				w, _ := gzip.NewWriterLevel(nil, level)
				return w
			}
			return brotli.NewWriterLevel(nil, level)
		}}
		pools[level] = p
	}
	return p
}

// encodeBody compresses b with enc at level.
func encodeBody(enc string, b []byte, level encodingLevel) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(b) / 3)
	switch enc {
	case encBrotli:
		pool := writerPool(enc, level.brotli)
		w := pool.Get().(*brotli.Writer)
		defer pool.Put(w)
		w.Reset(&out)
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case encGzip:
		pool := writerPool(enc, level.gzip)
		w := pool.Get().(*gzip.Writer)
		defer pool.Put(w)
		w.Reset(&out)
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	default:
		return b, nil
	}
	return out.Bytes(), nil
}

// compressPages compresses the HTML pages a handler rendered, with the
// coding the client asked for, and says that the response varies by
// Accept-Encoding (an HTML response always does, compressed or not, so a
// shared cache never hands a gzip body to a client that did not ask).
// Streams, other types and tiny bodies pass as they are.
func compressPages(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return err
	}
	resp := &c.Response().Header
	if !strings.HasPrefix(string(resp.ContentType()), fiber.MIMETextHTML) {
		return nil
	}
	c.Vary(fiber.HeaderAcceptEncoding)
	body := c.Response().Body()
	if c.Response().IsBodyStream() || len(resp.Peek(fiber.HeaderContentEncoding)) > 0 || len(body) < minCompress {
		return nil
	}
	enc := negotiateEncoding(c.Get(fiber.HeaderAcceptEncoding))
	if enc == "" {
		return nil
	}
	out, err := encodeBody(enc, body, levelPerPage)
	if err != nil {
		return nil // the page goes out uncompressed
	}
	c.Response().SetBodyRaw(out)
	resp.Set(fiber.HeaderContentEncoding, enc)
	return nil
}
