package call

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
)

// Post sends one JSON request through hc and returns the response when it
// is a 2xx, to be read and closed by the caller. The request goes through
// c, which records it when the context carries an llm.Recorder; a non-2xx
// answer is returned as its *StatusError (the body read and closed), a
// network error as it came (a *llm.TimeoutError stays one).
func Post(ctx context.Context, hc *http.Client, c *Capture, url string, header http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header = header.Clone()
	res, err := c.send(req, hc.Do)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		_ = res.Body.Close()
		if se := c.Err(); se != nil {
			return nil, se
		}
		return nil, &StatusError{Status: res.StatusCode, Header: res.Header.Clone()}
	}
	return res, nil
}
