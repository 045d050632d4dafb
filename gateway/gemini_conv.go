package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// A Gemini request's contents as a conversation both provider kinds can
// be given: user and assistant messages of text (and images), the
// assistant's function calls and the user's function results, each
// result tied to its call by id. Gemini CLI sends ids on both; a call
// without one gets one made up, and a result without one answers the
// first open call of its name. A call left unanswered when the
// conversation goes on gets a result saying so, as both providers
// refuse a conversation with an open call.

type convMessage struct {
	role    string // "user" or "assistant"
	parts   []convPart
	calls   []convCall   // assistant
	results []convResult // user: they come first, answering the previous calls
}

type convPart struct {
	text      string
	mediaType string // an image: its MIME type and base64 data
	data      string
}

type convCall struct {
	id, name string
	args     json.RawMessage // a JSON object
}

type convResult struct {
	id, name, content string
	isError           bool
}

// unansweredResult is the result given to a call the conversation left open.
const unansweredResult = `{"error":"the call was not answered"}`

// conversation translates the contents, checking each part.
func (req *geminiRequest) conversation() ([]convMessage, error) {
	var msgs []convMessage
	var open []convCall // the last assistant message's unanswered calls
	for i, c := range req.Contents {
		m, err := contentMessage(i, c, &open)
		if err != nil {
			return nil, err
		}
		switch {
		case m.role == "user":
			m.results = append(m.results, closeOpen(open)...)
		case len(open) > 0: // two model contents in a row: the first's calls need answers between them
			msgs = append(msgs, convMessage{role: "user", results: closeOpen(open)})
		}
		open = nil
		if m.role == "assistant" {
			open = append(open, m.calls...)
		}
		if len(m.parts) > 0 || len(m.calls) > 0 || len(m.results) > 0 {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "contents: every part is empty or a thought")
	}
	return msgs, nil
}

// closeOpen answers the calls left open.
func closeOpen(open []convCall) []convResult {
	out := make([]convResult, 0, len(open))
	for _, c := range open {
		out = append(out, convResult{id: c.id, name: c.name, content: unansweredResult, isError: true})
	}
	return out
}

// contentMessage translates contents[i]; open holds the calls a result
// may answer, and loses those answered.
func contentMessage(i int, c geminiContent, open *[]convCall) (convMessage, error) {
	m := convMessage{role: "user"}
	switch c.Role {
	case "", "user", "function":
	case "model":
		m.role = "assistant"
	default:
		return m, bullpen.Errorf(bullpen.EINVALID, "contents[%d].role %q is not user or model", i, c.Role)
	}
	for j, p := range c.Parts {
		at := fmt.Sprintf("contents[%d].parts[%d]", i, j)
		if err := m.addPart(at, j, i, p, open); err != nil {
			return m, err
		}
	}
	return m, nil
}

func (m *convMessage) addPart(at string, j, i int, p geminiPart, open *[]convCall) error {
	set := 0
	for _, ok := range []bool{p.Text != nil, p.InlineData != nil, p.FunctionCall != nil, p.FunctionResponse != nil,
		present(p.FileData), present(p.ExecutableCode), present(p.CodeExecutionResult)} {
		if ok {
			set++
		}
	}
	switch {
	case set == 0:
		return bullpen.Errorf(bullpen.EINVALID, "%s: a part needs one of text, inlineData, functionCall or functionResponse", at)
	case set > 1:
		return bullpen.Errorf(bullpen.EINVALID, "%s: a part holds one kind of data, not %d", at, set)
	case present(p.FileData):
		return bullpen.Errorf(bullpen.EINVALID, "%s: fileData (files uploaded to Google) is not served by the gateway: send the data inline", at)
	case present(p.ExecutableCode) || present(p.CodeExecutionResult):
		return bullpen.Errorf(bullpen.EINVALID, "%s: code execution parts are not served by the gateway", at)
	case p.Thought:
		return nil // the model's thinking is not sent back
	case p.Text != nil:
		if *p.Text != "" {
			m.parts = append(m.parts, convPart{text: *p.Text})
		}
		return nil
	case p.InlineData != nil:
		return m.addImage(at, p.InlineData.MimeType, p.InlineData.Data)
	case p.FunctionCall != nil:
		return m.addCall(at, i, j, p)
	}
	return m.addResult(at, p, open)
}

func (m *convMessage) addImage(at, mediaType, data string) error {
	if m.role != "user" || !strings.HasPrefix(mediaType, "image/") || data == "" {
		return bullpen.Errorf(bullpen.EINVALID, "%s: inlineData is served for images in user contents only, not %q", at, mediaType)
	}
	m.parts = append(m.parts, convPart{mediaType: mediaType, data: data})
	return nil
}

func (m *convMessage) addCall(at string, i, j int, p geminiPart) error {
	fc := p.FunctionCall
	if m.role != "assistant" {
		return bullpen.Errorf(bullpen.EINVALID, "%s: a functionCall belongs in a model content", at)
	}
	if fc.Name == "" {
		return bullpen.Errorf(bullpen.EINVALID, "%s.functionCall.name is not specified", at)
	}
	args := bytes.TrimSpace(fc.Args)
	if !present(args) {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return bullpen.Errorf(bullpen.EINVALID, "%s.functionCall.args must be an object", at)
	}
	id := fc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d_%d", i, j)
	}
	m.calls = append(m.calls, convCall{id: id, name: fc.Name, args: args})
	return nil
}

func (m *convMessage) addResult(at string, p geminiPart, open *[]convCall) error {
	fr := p.FunctionResponse
	if m.role != "user" {
		return bullpen.Errorf(bullpen.EINVALID, "%s: a functionResponse belongs in a user content", at)
	}
	if fr.Name == "" {
		return bullpen.Errorf(bullpen.EINVALID, "%s.functionResponse.name is not specified", at)
	}
	k := -1
	for n, c := range *open {
		if fr.ID != "" && c.id == fr.ID || fr.ID == "" && c.name == fr.Name {
			k = n
			break
		}
	}
	if k < 0 {
		return bullpen.Errorf(bullpen.EINVALID, "%s: the functionResponse %q answers no functionCall of the model content before it", at, fr.Name)
	}
	id := (*open)[k].id
	*open = append((*open)[:k:k], (*open)[k+1:]...)
	content, isErr := resultText(fr.Response)
	m.results = append(m.results, convResult{id: id, name: fr.Name, content: content, isError: isErr})
	return nil
}

// resultText is a function's response as the provider's tool result: the
// text of {"output": "…"} (how Gemini CLI answers), else the JSON. A
// response that holds only an error is an error result.
func resultText(raw json.RawMessage) (string, bool) {
	if !present(raw) {
		return "{}", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		var s string
		if out, ok := m["output"]; ok && json.Unmarshal(out, &s) == nil {
			return s, false
		}
		if _, ok := m["error"]; ok {
			return string(bytes.TrimSpace(raw)), true
		}
	}
	return string(bytes.TrimSpace(raw)), false
}

// text joins the text parts.
func (m convMessage) text() string {
	var sb strings.Builder
	for _, p := range m.parts {
		sb.WriteString(p.text)
	}
	return sb.String()
}

// hasImage reports whether the message carries an image.
func (m convMessage) hasImage() bool {
	for _, p := range m.parts {
		if p.mediaType != "" {
			return true
		}
	}
	return false
}

// systemText is the systemInstruction's text.
func (req *geminiRequest) systemText() (string, error) {
	if req.SystemInstruction == nil {
		return "", nil
	}
	var parts []string
	for j, p := range req.SystemInstruction.Parts {
		if p.Text == nil {
			return "", bullpen.Errorf(bullpen.EINVALID, "systemInstruction.parts[%d]: only text is served in the system instruction", j)
		}
		if !p.Thought && *p.Text != "" {
			parts = append(parts, *p.Text)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
