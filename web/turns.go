package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// TurnService is what the turn inspector needs; *agents.Service
// implements it.
type TurnService interface {
	// InspectTurn returns everything recorded of a turn. A human may see
	// the turns of channels they see; an agent only its own (EFORBIDDEN);
	// ENOTFOUND for an unknown turn.
	InspectTurn(ctx context.Context, actor bullpen.Member, id int64) (view.TurnDetail, error)
}

// turnRoutes registers the inspector's API.
func (s *Server) turnRoutes(api fiber.Router) {
	api.Get("/turns/:id", s.needTurns, s.getTurn)
}

// turnPages registers the inspector's dashboard page.
func (s *Server) turnPages(page fiber.Router) {
	page.Get("/turns/:id", s.needTurns, s.turnPage)
}

func (s *Server) needTurns(c *fiber.Ctx) error {
	if s.svc.Turns == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the turn inspector needs agents, which are not enabled on this server")
	}
	return c.Next()
}

func (s *Server) getTurn(c *fiber.Ctx) error { return keyed(c, turnID, s.svc.Turns.InspectTurn) }

// turnID reads :id, saying what it names when it is not a turn ID.
func turnID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "turn id must be a positive integer, not %q", c.Params("id"))
	}
	return id, nil
}

// linkedTurn is a turn in the agent's turn list, with where to inspect it.
type linkedTurn struct {
	bullpen.Turn
	URL        string `json:"url"`
	InspectURL string `json:"inspect_url"`
}

// linkTurns adds each turn's API and inspector addresses.
func linkTurns(ts []bullpen.Turn) []linkedTurn {
	out := make([]linkedTurn, len(ts))
	for i, t := range ts {
		out[i] = linkedTurn{Turn: t, URL: fmt.Sprintf("/api/v1/turns/%d", t.ID), InspectURL: fmt.Sprintf("/turns/%d", t.ID)}
	}
	return out
}

// turnPage renders the inspector for one turn.
func (s *Server) turnPage(c *fiber.Ctx) error {
	id, err := turnID(c)
	if err != nil {
		return err
	}
	d, err := s.svc.Turns.InspectTurn(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	p := turnPageModel(d)
	p.Office, p.CSRF = s.cfg.OfficeName, csrfOf(c)
	return render(c, views.Inspector(p))
}

// turnPageModel is the inspector's view of a turn.
func turnPageModel(d view.TurnDetail) views.TurnPage {
	t := d.Turn
	p := views.TurnPage{ID: t.ID, APIURL: d.URL, Agent: d.Agent.Handle, State: t.State, Provider: t.Provider, Model: t.Model,
		Error: t.Error, Started: t.StartedAt.UTC().Format(time.RFC3339), Simulated: d.Simulated, Steps: t.Steps,
		SystemPrefix: d.SystemPrefix, WorkPacket: d.WorkPacket, PromptSource: d.PromptSource,
		Tokens: views.TokenCounts{Input: t.InputTokens, Cached: t.CachedInputTokens, CacheWrite: t.CacheWriteTokens, Output: t.OutputTokens}}
	if t.FinishedAt != nil {
		p.Duration = msText(t.FinishedAt.Sub(t.StartedAt).Milliseconds())
	}
	for _, w := range d.Wakes {
		p.Wakes = append(p.Wakes, wakeItem(w))
	}
	for _, mc := range d.ModelCalls {
		p.Calls = append(p.Calls, modelCallItem(mc))
	}
	for _, r := range d.Memory {
		p.Memory = append(p.Memory, views.RecallItem{ID: r.EntryID, Kind: r.Kind, Text: r.Text, Why: r.Why,
			Score: strconv.FormatFloat(r.Score, 'g', 3, 64), Tokens: r.Tokens,
			Link: fmt.Sprintf("/api/v1/agents/%d/memory/%d", d.Agent.ID, r.EntryID)})
	}
	for _, tc := range t.ToolCalls {
		p.Tools = append(p.Tools, views.ToolCallItem{Name: tc.Name, State: tc.State, Duration: msText(tc.DurationMS),
			Args: tc.Arguments, ArgsPretty: pretty(tc.Arguments), Result: tc.Result, ResultPretty: pretty(tc.Result)})
	}
	if d.Cost != nil {
		p.Cost = fmt.Sprintf("$%.4f", d.Cost.USD)
		p.CostNote = fmt.Sprintf("at %s list prices per 1M tokens: input $%g, cached $%g, cache write $%g, output $%g",
			d.Cost.Price.Model, d.Cost.Price.Input, d.Cost.Price.Cached, d.Cost.Price.CacheWrite, d.Cost.Price.Output)
	}
	b := d.Budgets
	p.Budgets = []views.BudgetItem{
		{Name: "Model calls this turn", Limit: b.Steps.Limit, Used: b.Steps.Used, Left: b.Steps.Left},
		{Name: "Tokens this turn", Limit: b.TurnTokens.Limit, Used: b.TurnTokens.Used, Left: b.TurnTokens.Left},
		{Name: "Tokens today (UTC)", Limit: b.DailyTokens.Limit, Used: b.DailyTokens.Used, Left: b.DailyTokens.Left},
	}
	return p
}

func wakeItem(w view.TurnWake) views.WakeItem {
	item := views.WakeItem{Reason: w.Reason, ApprovalID: w.ApprovalID}
	if m := w.Message; m != nil {
		root := m.ThreadID
		if root == 0 {
			root = m.ID
		}
		item.Author, item.Body, item.Deleted = m.Author, m.Body, m.Deleted
		item.Link = "/c/" + url.PathEscape(m.Channel) + "#thread-" + strconv.FormatInt(root, 10)
		item.Where = "#" + m.Channel
	}
	return item
}

func modelCallItem(mc bullpen.ModelCall) views.ModelCallItem {
	return views.ModelCallItem{Seq: mc.Seq, Via: mc.Via, Provider: mc.Provider, Model: mc.Model, Method: mc.Method, URL: mc.URL,
		Simulated: mc.Simulated, Status: mc.Status, Error: mc.Error, Duration: msText(mc.DurationMS),
		Request: mc.Request, RequestPretty: pretty(mc.Request), RequestBytes: mc.RequestBytes, RequestCut: mc.RequestTruncated,
		Response: mc.Response, ResponsePretty: pretty(mc.Response), ResponseBytes: mc.ResponseBytes, ResponseCut: mc.ResponseTruncated,
		Tokens: views.TokenCounts{Input: mc.InputTokens, Cached: mc.CachedInputTokens, CacheWrite: mc.CacheWriteTokens, Output: mc.OutputTokens}}
}

// pretty indents s when it is JSON; "" when it is not (SSE, plain text),
// so the page shows only the raw bytes.
func pretty(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return ""
	}
	return b.String()
}

func msText(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}
