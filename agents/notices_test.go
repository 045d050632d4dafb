package agents

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/store"
)

// The waiting notice, the turn's record and its events name the provider
// the agent uses ("hung", set up in Settings), not its client's kind.
func TestNoticesNameTheAgentsProvider(t *testing.T) {
	silent := llmtest.NewSilent()
	defer silent.Close()
	providers := map[string]llm.Provider{"hung": openai.New(openai.Config{BaseURL: silent.BaseURL(), Model: "m", MaxRetries: -1})}
	h := newHarness(t, store.SQLite, providers, func(c *Config) {
		c.DefaultProvider = "hung"
		c.Timeouts = bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute), Notice: bullpen.Duration(200 * time.Millisecond)}
	})
	a := h.hireAs("starter/lead", "h1", "hung")
	h.start()
	h.post(h.admin, h.general.ID, 0, "@h1 answer")
	waitFor(t, func() bool { return h.countNotices("is still waiting for the model") >= 1 })
	if h.countNotices("(hung, ") != 1 {
		t.Errorf("the notice does not name provider hung: %q", h.messages(0))
	}
	if st := h.svc.Status(a.ID); st.State != bullpen.StatusWaiting {
		t.Errorf("status = %+v", st)
	}
	found := false
	for _, ev := range h.events(0) {
		if ev.Type == bullpen.EventTurnStarted {
			te, err := bullpen.DecodePayload[bullpen.TurnEvent](ev, bullpen.EventTurnStarted)
			if err != nil || te.Provider != "hung" {
				t.Errorf("turn_started names provider %q, want hung", te.Provider)
			}
			found = true
		}
	}
	if !found {
		t.Error("no turn started")
	}
}

// A stream that stalls after its first chunk gets the notice too.
func TestStalledStreamGetsNotice(t *testing.T) {
	gone := make(chan struct{})
	f := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"first words"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select { // then silence
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	defer f.Close()
	defer close(gone)
	providers := map[string]llm.Provider{"openai": openai.New(openai.Config{BaseURL: f.URL + "/v1", Model: "m", MaxRetries: -1})}
	h := newHarness(t, store.SQLite, providers, func(c *Config) {
		c.DefaultProvider = "openai"
		c.Timeouts = bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute), Idle: bullpen.Duration(time.Minute),
			Notice: bullpen.Duration(300 * time.Millisecond)}
	})
	h.hireAs("starter/lead", "slow", "openai")
	h.start()
	h.post(h.admin, h.general.ID, 0, "@slow answer")
	waitFor(t, func() bool { return h.countNotices("its answer began, then nothing new came") >= 1 })
}

// An agent whose provider's slots are all taken shows that it waits for
// one, not that it is thinking.
func TestWaitingForSlotShows(t *testing.T) {
	silent := llmtest.NewSilent()
	defer silent.Close()
	providers := map[string]llm.Provider{"hung": openai.New(openai.Config{BaseURL: silent.BaseURL(), Model: "m", MaxRetries: -1})}
	h := newHarness(t, store.SQLite, providers, func(c *Config) {
		c.DefaultProvider = "hung"
		c.ProviderConcurrency = 1
		c.Timeouts = bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute), Notice: bullpen.Duration(time.Minute)}
	})
	a1 := h.hireAs("starter/lead", "s1", "hung")
	a2 := h.hireAs("starter/lead", "s2", "hung")
	h.start()
	h.post(h.admin, h.general.ID, 0, "@s1 @s2 answer")
	waitFor(t, func() bool { return silent.Accepted() >= 1 })
	waitFor(t, func() bool {
		for _, id := range []int64{a1.ID, a2.ID} {
			if st := h.svc.Status(id); strings.HasPrefix(st.Detail, "waiting for a slot") && st.State == bullpen.StatusWaiting {
				return true
			}
		}
		return false
	})
}
