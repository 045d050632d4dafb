package views

import (
	"strings"
	"testing"
)

// The inspector marks what was cut with the kept and whole sizes, shows
// JSON pretty with the raw bytes behind a toggle and a non-JSON body (SSE)
// raw only, says "unknown" for a model without a price, and shows model
// text as text.
func TestInspectorMarksCutsAndBodies(t *testing.T) {
	p := TurnPage{ID: 7, Agent: "eng", State: "done", Model: "llama3", PromptSource: "request",
		WorkPacket: "## Why\n- <b>hi</b>",
		Calls: []ModelCallItem{{Seq: 1, Method: "POST", URL: "http://m/v1/chat/completions", Via: "builtin", Status: 200,
			Request: `{"a":1}`, RequestPretty: "{\n  \"a\": 1\n}", RequestBytes: 9000, RequestCut: true,
			Response: "data: {}\n\n", ResponseBytes: 10}},
		Tools: []ToolCallItem{{Name: "sandbox_exec", State: "ok", Args: `{"command":"df -h"}`, ArgsPretty: "{\n  \"command\": \"df -h\"\n}", Result: "exit 0"}},
	}
	doc, _ := renderDoc(t, Inspector(p))
	cuts := doc.Find(byTestID("inspector-cut"))
	if cuts.Length() != 1 || cuts.Text() != "✂ cut: 7 of 9000 bytes kept" {
		t.Errorf("cut marks = %d %q, want one for the request: 7 of 9000 bytes", cuts.Length(), cuts.Text())
	}
	req := doc.Find(byTestID("inspector-request"))
	if raw := req.Find(byTestID("inspector-request-raw")); raw.Text() != `{"a":1}` || raw.AttrOr("hidden", "no") == "no" || req.Find("[data-raw-toggle]").Length() != 1 {
		t.Errorf("request raw = %q (hidden %v); want the bytes behind a toggle", raw.Text(), raw.AttrOr("hidden", "no") != "no")
	}
	resp := doc.Find(byTestID("inspector-response"))
	if raw := resp.Find(byTestID("inspector-response-raw")); raw.Text() != "data: {}\n\n" || raw.AttrOr("hidden", "no") != "no" || resp.Find("[data-raw-toggle]").Length() != 0 {
		t.Errorf("SSE response = %q; want shown raw, without a toggle", raw.Text())
	}
	if got := doc.Find(byTestID("inspector-packet")).Text(); got != p.WorkPacket {
		t.Errorf("packet = %q, want the text as is", got)
	}
	if doc.Find(byTestID("inspector-packet")+" b").Length() != 0 {
		t.Error("model text became markup")
	}
	if got := doc.Find(byTestID("inspector-cost")).Text(); !strings.Contains(got, "unknown: no price is known for llama3") {
		t.Errorf("cost = %q, want unknown", got)
	}
	if got := doc.Find(byTestID("inspector-tool-name")).Text(); got != "sandbox_exec" {
		t.Errorf("tool = %q", got)
	}
}

// A turn whose packet no model request carried yet says so, not that a
// request was cut.
func TestInspectorPendingPacket(t *testing.T) {
	p := TurnPage{ID: 8, Agent: "eng", State: "running", PromptSource: "pending", WorkPacket: "## Why\n- go"}
	doc, html := renderDoc(t, Inspector(p))
	if doc.Find(byTestID("inspector-pending")).Length() != 1 || strings.Contains(html, "was cut") ||
		doc.Find(byTestID("inspector-packet")).Text() != p.WorkPacket {
		t.Errorf("pending packet: %d pending notes, cut note %v, packet %q", doc.Find(byTestID("inspector-pending")).Length(),
			strings.Contains(html, "was cut"), doc.Find(byTestID("inspector-packet")).Text())
	}
}

// The inspector lists the recalled memory entries with why and their
// scores, entry text as text, and a forgotten one as such.
func TestInspectorRecalledMemory(t *testing.T) {
	p := TurnPage{ID: 8, Agent: "eng", State: "done", Memory: []RecallItem{
		{ID: 3, Kind: "lesson", Text: "Never deploy on <b>Fridays</b>", Why: "match", Score: "0.42", Tokens: 9, Link: "/api/v1/agents/2/memory/3"},
		{ID: 4, Kind: "fact", Why: "pinned", Score: "0", Tokens: 5, Link: "/api/v1/agents/2/memory/4"},
	}}
	doc, _ := renderDoc(t, Inspector(p))
	rows := doc.Find(byTestID("inspector-memory-entry"))
	if rows.Length() != 2 {
		t.Fatalf("recalled rows = %d, want 2", rows.Length())
	}
	first := rows.First()
	if !strings.Contains(first.Text(), "Never deploy on <b>Fridays</b>") || first.Find("b").Length() != 0 ||
		first.Find(byTestID("inspector-memory-score")).Text() != "0.42" || !strings.Contains(first.Text(), "match") {
		t.Errorf("first row = %q, want the lesson as text with why and score", first.Text())
	}
	if !strings.Contains(rows.Last().Text(), "forgotten since") {
		t.Errorf("forgotten entry row = %q", rows.Last().Text())
	}
	empty, _ := renderDoc(t, Inspector(TurnPage{ID: 9, Agent: "eng", State: "done"}))
	if !strings.Contains(empty.Find(byTestID("inspector-memory")).Text(), "No memory entry was recalled") {
		t.Error("a turn without recall does not say so")
	}
}
