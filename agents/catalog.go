package agents

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen"
)

//go:embed packs
var packsFS embed.FS

// Catalog is the set of roles one can hire from: the built-in packs
// ("starter/lead", "coding/backend", …) and the user's roles directory
// ("local/<file name without extension>"). The directory is read again by
// Reload, which Watch calls on every change; it is safe for concurrent use.
type Catalog struct {
	dir     string
	builtin map[string]bullpen.Role

	mu    sync.RWMutex
	roles map[string]bullpen.Role
	ids   []string
	// problems are the user's role files that failed to load.
	problems []bullpen.RoleProblem
}

// Packs lists the built-in pack names.
func Packs() []string {
	entries, _ := fs.ReadDir(packsFS, "packs")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// LoadCatalog reads the built-in packs and, when dir is not empty, the
// role files in dir (*.md, *.yaml, *.yml). Built-in roles always load; an
// invalid user file is left out and reported in the returned error, which
// names the file and the field.
func LoadCatalog(dir string) (*Catalog, error) {
	c := &Catalog{dir: dir, builtin: map[string]bullpen.Role{}}
	err := fs.WalkDir(packsFS, "packs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := packsFS.ReadFile(p)
		if err != nil {
			return err
		}
		id := strings.TrimSuffix(strings.TrimPrefix(p, "packs/"), path.Ext(p))
		r, err := ParseRole(strings.TrimPrefix(p, "packs/"), data)
		if err != nil {
			return err
		}
		r.Source = id
		c.builtin[id] = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("agents: built-in roles: %w", err)
	}
	return c, c.Reload()
}

// Reload reads the roles directory again. A file that fails lists all
// its problems, under its path relative to the data directory; a role
// that loaded before keeps its last good version until the file is fixed.
func (c *Catalog) Reload() error {
	roles := maps.Clone(c.builtin)
	var problems []bullpen.RoleProblem
	var errs []error
	entries, err := c.entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".md" && ext != ".yaml" && ext != ".yml") {
			continue
		}
		id := "local/" + strings.TrimSuffix(e.Name(), ext)
		rel := filepath.Join(filepath.Base(c.dir), e.Name()) // as the data directory names it
		var perrs []error
		r := bullpen.Role{}
		data, err := os.ReadFile(filepath.Join(c.dir, e.Name()))
		if err != nil {
			perrs = []error{fmt.Errorf("cannot read the file: %w", errors.Unwrap(err))}
		} else {
			r, perrs = parseRole(rel, data)
		}
		if len(perrs) == 0 {
			r.Source = id
			roles[id] = r
			continue
		}
		p := bullpen.RoleProblem{Path: rel}
		for _, pe := range perrs {
			p.Errors = append(p.Errors, problemText(pe))
			errs = append(errs, fmt.Errorf("agents: role file %s: %s", rel, problemText(pe)))
		}
		p.Error = strings.Join(p.Errors, "\n")
		if old, err := c.Role(id); err == nil {
			roles[id], p.Kept = old, true
		}
		problems = append(problems, p)
	}
	ids := slices.Sorted(maps.Keys(roles))
	c.mu.Lock()
	c.roles, c.ids, c.problems = roles, ids, problems
	c.mu.Unlock()
	return errors.Join(errs...)
}

// entries lists the roles directory; none when there is none.
func (c *Catalog) entries() ([]fs.DirEntry, error) {
	if c.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("agents: roles directory: %w", err)
	}
	return entries, nil
}

// problemText is one problem of a role file without the file's name,
// which the problem's path already gives.
func problemText(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fmt.Sprintf("field %q: %s", fe.Field, fe.Msg)
	}
	return err.Error()
}

// Role returns a role by ID ("starter/lead").
func (c *Catalog) Role(id string) (bullpen.Role, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, ok := c.roles[id]
	if !ok {
		return bullpen.Role{}, bullpen.Errorf(bullpen.ENOTFOUND, "role %q not found (see GET /api/v1/roles)", id)
	}
	return r, nil
}

// List returns every role, by ID.
func (c *Catalog) List() []bullpen.RoleInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]bullpen.RoleInfo, 0, len(c.ids))
	for _, id := range c.ids {
		out = append(out, bullpen.RoleInfo{ID: id, Role: c.roles[id]})
	}
	return out
}

// Problems lists the role files of the roles directory that failed to
// load, with why, so that the API and the Agents panel can show them.
func (c *Catalog) Problems() []bullpen.RoleProblem {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]bullpen.RoleProblem{}, c.problems...)
}

// Pack returns the roles of one pack, by ID.
func (c *Catalog) Pack(name string) []bullpen.Role {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []bullpen.Role
	for _, id := range c.ids {
		if strings.HasPrefix(id, name+"/") {
			out = append(out, c.roles[id])
		}
	}
	return out
}
