package openapi

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

const mainDoc = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /api/v1/me:
    get: {responses: {'200': {description: ok}}}
components:
  schemas:
    Error: {type: object}
`

// TestFragmentsMerge checks that a fragment's paths and components join
// the main document, and that a fragment cannot replace what is there or
// add anything but paths and components.
func TestFragmentsMerge(t *testing.T) {
	fsys := fstest.MapFS{
		"openapi.yaml": {Data: []byte(mainDoc)},
		"fragments/turns.yaml": {Data: []byte(`paths:
  /api/v1/turns/{id}:
    get: {responses: {'200': {description: ok}}}
components:
  schemas:
    Turn: {type: object}
  parameters:
    TurnID: {name: id, in: path, required: true, schema: {type: integer}}
`)},
	}
	raw, err := build(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]any `json:"paths"`
		Components struct {
			Schemas    map[string]any `json:"schemas"`
			Parameters map[string]any `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Paths["/api/v1/me"] == nil || doc.Paths["/api/v1/turns/{id}"] == nil || doc.Components.Schemas["Error"] == nil ||
		doc.Components.Schemas["Turn"] == nil || doc.Components.Parameters["TurnID"] == nil {
		t.Errorf("merged document lacks a part: %s", raw)
	}
	for name, frag := range map[string]string{
		"a path again":   "paths:\n  /api/v1/me:\n    get: {responses: {'200': {description: ok}}}\n",
		"a schema again": "components:\n  schemas:\n    Error: {type: string}\n",
		"another key":    "info: {title: mine}\n",
		"not YAML":       "paths: [\n",
	} {
		fsys["fragments/bad.yaml"] = &fstest.MapFile{Data: []byte(frag)}
		if _, err := build(fsys); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%s: build = %v, want an error naming bad.yaml", name, err)
		}
	}
}

// TestServedDocumentIsJSON checks the embedded document builds.
func TestServedDocumentIsJSON(t *testing.T) {
	raw, err := JSON()
	if err != nil || !json.Valid(raw) {
		t.Fatalf("JSON() = %d bytes, %v", len(raw), err)
	}
}
