package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Budgets are reservations. Before a call is forwarded the gateway counts
// its input with the offline tokenizer and asks Turns to reserve the worst
// case: that input plus the output the request may produce. Turns grants
// at most what the turn's and the agent's daily budgets leave; the
// request's output limit (max_tokens, max_completion_tokens or
// max_output_tokens) is clamped to the grant, or set to it when the
// request has none, so the provider cannot answer past the budget. When
// the call ends the reservation is settled: with the provider's usage if
// it arrived whole, with the whole reservation if it did not (the client
// hung up, the stream was cut, the body was malformed), with nothing if
// the provider refused the call or was never reached.

// Reservation is what Turns.Reserve granted one call.
type Reservation struct {
	ID     int64
	Input  int // the request's input tokens, as counted
	Output int // output tokens granted: the request's limit is clamped to it
}

// charge says how a call's reservation is settled.
type charge int

const (
	chargeFull  charge = iota // no usage arrived: the whole reservation
	chargeUsage               // the answer's usage, if it arrived whole
	chargeNone                // the provider refused or was not reached
)

// outputFields are the request fields that bound a call's output, per API;
// the first is the one set when the request has none.
func outputFields(api, model string) []string {
	switch api {
	case apiMessages:
		return []string{"max_tokens"}
	case apiResponses:
		return []string{"max_output_tokens"}
	case apiCompact:
		return nil // /responses/compact takes no output limit
	}
	// OpenAI's reasoning models refuse max_tokens; every other
	// OpenAI-compatible server knows it.
	if m := strings.ToLower(model); strings.HasPrefix(m, "o1") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4") ||
		strings.HasPrefix(m, "gpt-5") {
		return []string{"max_completion_tokens", "max_tokens"}
	}
	return []string{"max_tokens", "max_completion_tokens"}
}

// requestedOutput is the smallest output limit the request sets, or 0.
func requestedOutput(body []byte, fields []string) int {
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil {
		return 0
	}
	least := 0
	for _, f := range fields {
		var n int
		if raw, ok := v[f]; ok && json.Unmarshal(raw, &n) == nil && n > 0 && (least == 0 || n < least) {
			least = n
		}
	}
	return least
}

// reserve counts the call's input and reserves it with its output; on a
// budget stop it tells the channel and returns the 429 error.
func (g *Gateway) reserve(ctx context.Context, c *call) error {
	fields := outputFields(c.ep.api, c.model)
	want := requestedOutput(c.body, fields)
	if want == 0 {
		want = g.cfg.DefaultMaxOutput
	}
	input := llm.Count(string(c.body))
	b, res, err := g.cfg.Turns.Reserve(ctx, c.turnID, input, want)
	c.budget = b
	if err != nil {
		return fmt.Errorf("gateway: reserve tokens of turn %d: %w", c.turnID, err)
	}
	if b.Limit != "" {
		if err := g.cfg.Turns.BudgetStopped(ctx, c.turnID, b); err != nil {
			g.cfg.Logger.Error("gateway: budget notice", "turn", c.turnID, "err", err)
		}
		return bullpen.Errorf(bullpen.ERATELIMIT, "%s", b.Detail)
	}
	c.res = &res
	if len(fields) == 0 {
		return nil
	}
	// Each limit the request sets is clamped (one it keeps under the grant
	// is left as sent); a request without one gets the API's field.
	body, present := c.body, false
	for _, f := range fields {
		n := requestedOutput(body, []string{f})
		present = present || n > 0
		if n > res.Output {
			if body, err = setTopLevel(body, f, res.Output); err != nil {
				return bullpen.Errorf(bullpen.EINVALID, "the request body is not a JSON object: %v", err)
			}
		}
	}
	if !present {
		if body, err = setTopLevel(body, fields[0], res.Output); err != nil {
			return bullpen.Errorf(bullpen.EINVALID, "the request body is not a JSON object: %v", err)
		}
	}
	c.body = body
	return nil
}

// settle ends the call's reservation once.
func (g *Gateway) settle(ctx context.Context, c *call, how charge, u llm.Usage, complete bool) {
	if c.res == nil {
		return
	}
	res := *c.res
	c.res = nil
	switch how {
	case chargeNone:
		u, complete = llm.Usage{}, true
	case chargeFull:
		complete = false
	}
	if err := g.cfg.Turns.Settle(ctx, c.turnID, res, u, complete); err != nil {
		g.cfg.Logger.Error("gateway: settle tokens", "turn", c.turnID, "err", err)
	}
}

// setTopLevel sets the top-level key of a JSON object to n, keeping every
// other byte as sent; a missing key is added first.
func setTopLevel(body []byte, key string, n int) ([]byte, error) {
	val := strconv.Itoa(n)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	open := int(dec.InputOffset())
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if k, _ := tok.(string); k == key {
			end := int(dec.InputOffset())
			start := end - len(raw)
			return append(append(append([]byte{}, body[:start]...), val...), body[end:]...), nil
		}
	}
	sep := ","
	if bytes.TrimSpace(body[open:])[0] == '}' {
		sep = ""
	}
	q, _ := json.Marshal(key)
	out := append(append([]byte{}, body[:open]...), q...)
	out = append(append(append(out, ':'), val...), sep...)
	return append(out, body[open:]...), nil
}

// chargeOfFailure is how a call the provider did not answer is charged:
// nothing when it never left (the provider could not be dialled), else its
// whole reservation, as the provider may have run it.
func chargeOfFailure(err error) charge {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return chargeNone
	}
	return chargeFull
}

// busy reports whether err is a turn's call cap, not a budget: the client
// may come back shortly.
func busy(c *call, err error) bool {
	return bullpen.ErrorCode(err) == bullpen.ERATELIMIT && c.budget.Limit == ""
}

// retryAfterBusy is the Retry-After of a call refused by the turn's cap.
const retryAfterBusy = "1"

func setRetryAfter(w http.ResponseWriter) { w.Header().Set("Retry-After", retryAfterBusy) }
