// Package openapi holds Bullpen's OpenAPI 3.1 description of /api/v1: the
// main document (openapi.yaml) and the fragments other features add
// (fragments/*.yaml), merged into one document. The web server serves it
// as JSON; tests validate real traffic against it (see openapitest).
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml fragments
var files embed.FS

// mergedKeys are the maps a fragment may add entries to; an entry already
// present is an error, so no fragment can silently replace another's.
var mergedKeys = [][]string{
	{"paths"},
	{"components", "schemas"},
	{"components", "parameters"},
	{"components", "responses"},
}

var (
	once    sync.Once
	doc     []byte
	loadErr error
)

// JSON returns the whole document, fragments merged, as JSON. It is built
// once; the result must not be modified.
func JSON() ([]byte, error) {
	once.Do(func() { doc, loadErr = build(files) })
	return doc, loadErr
}

// build reads openapi.yaml and merges every fragments/*.yaml of fsys into it.
func build(fsys fs.FS) ([]byte, error) {
	main, err := readYAML(fsys, "openapi.yaml")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "fragments/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("openapi: list fragments: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		frag, err := readYAML(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := merge(main, frag, path.Base(name)); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(main)
	if err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return out, nil
}

func readYAML(fsys fs.FS, name string) (map[string]any, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("openapi: read %s: %w", name, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("openapi: parse %s: %w", name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// merge adds the fragment's paths and components to main. Anything else in
// the fragment is refused, so that a typo does not vanish.
func merge(main, frag map[string]any, name string) error {
	for k := range frag {
		if k != "paths" && k != "components" {
			return fmt.Errorf("openapi: fragment %s: top-level key %q (only paths and components merge)", name, k)
		}
	}
	for _, keys := range mergedKeys {
		src, err := mapAt(frag, keys, false)
		if err != nil || src == nil {
			if err != nil {
				return fmt.Errorf("openapi: fragment %s: %w", name, err)
			}
			continue
		}
		dst, err := mapAt(main, keys, true)
		if err != nil {
			return fmt.Errorf("openapi: openapi.yaml: %w", err)
		}
		for k, v := range src {
			if _, dup := dst[k]; dup {
				return fmt.Errorf("openapi: fragment %s: %s %q is already defined", name, path.Join(keys...), k)
			}
			dst[k] = v
		}
	}
	return nil
}

// mapAt walks m along keys and returns the map there; with create, missing
// maps are made on the way, otherwise a missing one is nil.
func mapAt(m map[string]any, keys []string, create bool) (map[string]any, error) {
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			if !create {
				return nil, nil
			}
			v = map[string]any{}
			m[k] = v
		}
		next, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a map", k)
		}
		m = next
	}
	return m, nil
}
