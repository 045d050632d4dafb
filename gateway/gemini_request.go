package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// geminiRequest is a Gemini API GenerateContentRequest (the body of
// :generateContent and :streamGenerateContent; :countTokens sends its
// contents or a whole one as generateContentRequest). Field names are
// read in the API's camelCase; snake_case ones (the REST API takes both)
// are renamed first (camelKeys).
type geminiRequest struct {
	Contents          []geminiContent              `json:"contents"`
	SystemInstruction *geminiContent               `json:"systemInstruction"`
	Tools             []map[string]json.RawMessage `json:"tools"`
	ToolConfig        *struct {
		FunctionCallingConfig *struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *geminiGenConfig `json:"generationConfig"`
	CachedContent    string           `json:"cachedContent"`
	// GenerateContentRequest is :countTokens' whole request form.
	GenerateContentRequest *geminiRequest `json:"generateContentRequest"`

	funcs []geminiFunction // the function declarations of Tools
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is one part of a content; exactly one of its data fields is
// set. Thought parts (the model's thinking) and thought signatures are
// read and dropped: neither provider kind takes them back.
type geminiPart struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	FileData            json.RawMessage `json:"fileData"`
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
}

type geminiFunction struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Parameters           json.RawMessage `json:"parameters"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

// geminiGenConfig is the generationConfig the gateway carries over.
// thinkingConfig is dropped (the provider's own default applies), and so
// are the settings neither provider kind has (safety, media resolution).
type geminiGenConfig struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"topP"`
	TopK               *float64        `json:"topK"`
	StopSequences      []string        `json:"stopSequences"`
	CandidateCount     *int            `json:"candidateCount"`
	PresencePenalty    *float64        `json:"presencePenalty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty"`
	Seed               *int            `json:"seed"`
	ResponseMimeType   string          `json:"responseMimeType"`
	ResponseSchema     json.RawMessage `json:"responseSchema"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	ResponseModalities []string        `json:"responseModalities"`
}

// parseGeminiRequest decodes body and checks what the gateway can carry
// over; anything else is an EINVALID error naming the field.
func parseGeminiRequest(body []byte, count bool) (*geminiRequest, error) {
	norm, err := camelKeys(body)
	if err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "Invalid JSON payload received: %v", err)
	}
	req := &geminiRequest{}
	if err := json.Unmarshal(norm, req); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "Invalid JSON payload received: %s", fieldProblem(err))
	}
	if count && req.GenerateContentRequest != nil {
		if len(req.Contents) > 0 {
			return nil, bullpen.Errorf(bullpen.EINVALID, "countTokens takes contents or generateContentRequest, not both")
		}
		req = req.GenerateContentRequest
	}
	if len(req.Contents) == 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "contents is not specified")
	}
	if req.CachedContent != "" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "cachedContent is not served by the gateway: send the contents themselves")
	}
	if err := req.checkConfig(); err != nil {
		return nil, err
	}
	if err := req.readTools(); err != nil {
		return nil, err
	}
	return req, nil
}

func (req *geminiRequest) checkConfig() error {
	gc := req.GenerationConfig
	if gc == nil {
		return nil
	}
	switch {
	case gc.MaxOutputTokens != nil && *gc.MaxOutputTokens < 1:
		return bullpen.Errorf(bullpen.EINVALID, "generationConfig.maxOutputTokens must be at least 1, got %d", *gc.MaxOutputTokens)
	case gc.CandidateCount != nil && *gc.CandidateCount != 1:
		return bullpen.Errorf(bullpen.EINVALID, "generationConfig.candidateCount: the gateway serves one candidate, not %d", *gc.CandidateCount)
	case gc.ResponseMimeType != "" && gc.ResponseMimeType != "text/plain" && gc.ResponseMimeType != "application/json":
		return bullpen.Errorf(bullpen.EINVALID, "generationConfig.responseMimeType %q is not text/plain or application/json", gc.ResponseMimeType)
	case len(gc.ResponseSchema) > 0 && len(gc.ResponseJSONSchema) > 0:
		return bullpen.Errorf(bullpen.EINVALID, "generationConfig: responseSchema and responseJsonSchema cannot both be set")
	}
	for _, m := range gc.ResponseModalities {
		if !strings.EqualFold(m, "TEXT") {
			return bullpen.Errorf(bullpen.EINVALID, "generationConfig.responseModalities: only TEXT is served, not %s", m)
		}
	}
	return nil
}

// readTools collects the function declarations; tools of other kinds
// (Google Search, code execution, URL context …) run at Google and are
// refused.
func (req *geminiRequest) readTools() error {
	for i, t := range req.Tools {
		for k, raw := range t {
			if k != "functionDeclarations" {
				return bullpen.Errorf(bullpen.EINVALID, "tools[%d].%s is not served by the gateway, which forwards to a provider that runs no Google tools: only functionDeclarations are", i, k)
			}
			var fs []geminiFunction
			if err := json.Unmarshal(raw, &fs); err != nil {
				return bullpen.Errorf(bullpen.EINVALID, "tools[%d].functionDeclarations must be an array of function declarations", i)
			}
			for j, f := range fs {
				switch {
				case f.Name == "":
					return bullpen.Errorf(bullpen.EINVALID, "tools[%d].functionDeclarations[%d].name is not specified", i, j)
				case present(f.Parameters) && present(f.ParametersJSONSchema):
					return bullpen.Errorf(bullpen.EINVALID, "tools[%d].functionDeclarations[%d]: parameters and parametersJsonSchema cannot both be set", i, j)
				}
			}
			req.funcs = append(req.funcs, fs...)
		}
	}
	return nil
}

// toolMode is toolConfig's function calling mode (AUTO when unset) and
// the functions it allows.
func (req *geminiRequest) toolMode() (string, []string, error) {
	if req.ToolConfig == nil || req.ToolConfig.FunctionCallingConfig == nil {
		return "AUTO", nil, nil
	}
	fc := req.ToolConfig.FunctionCallingConfig
	mode := strings.ToUpper(fc.Mode)
	switch mode {
	case "", "MODE_UNSPECIFIED", "VALIDATED":
		mode = "AUTO"
	case "AUTO", "ANY", "NONE":
	default:
		return "", nil, bullpen.Errorf(bullpen.EINVALID, "toolConfig.functionCallingConfig.mode %q is not AUTO, ANY, VALIDATED or NONE", fc.Mode)
	}
	return mode, fc.AllowedFunctionNames, nil
}

func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// opaqueKeys hold what the caller wrote as it is (function arguments and
// results, schemas, labels): their keys are not renamed.
var opaqueKeys = map[string]bool{"args": true, "response": true, "parameters": true, "parametersJsonSchema": true,
	"responseSchema": true, "responseJsonSchema": true, "labels": true, "responseJsonSchemaOrdering": true}

// camelKeys renames the snake_case keys of a request to camelCase, as
// the Gemini REST API reads both, leaving opaque values alone. Numbers
// keep their text.
func camelKeys(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errStr("the request body is not a JSON object")
	}
	if dec.More() {
		return nil, errStr("the request body has more than one JSON value")
	}
	return json.Marshal(renameKeys(v))
}

func renameKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			k = camel(k)
			if !opaqueKeys[k] {
				val = renameKeys(val)
			}
			out[k] = val
		}
		return out
	case []any:
		for i := range x {
			x[i] = renameKeys(x[i])
		}
	}
	return v
}

func camel(k string) string {
	if !strings.Contains(k, "_") {
		return k
	}
	parts := strings.Split(k, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

type errStr string

func (e errStr) Error() string { return string(e) }
