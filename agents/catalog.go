package agents

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

//go:embed packs
var packsFS embed.FS

// Catalog is the set of roles one can hire from: the built-in packs
// ("starter/lead", "coding/backend", …) and the user's roles directory
// ("local/<file name without extension>").
type Catalog struct {
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
	c := &Catalog{roles: map[string]bullpen.Role{}}
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
		c.add(id, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("agents: built-in roles: %w", err)
	}
	if dir == "" {
		return c, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	} else if err != nil {
		return c, fmt.Errorf("agents: roles directory: %w", err)
	}
	var errs []error
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".md" && ext != ".yaml" && ext != ".yml") {
			continue
		}
		full := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(full)
		if err != nil {
			errs = append(errs, fmt.Errorf("agents: read role file %s: %w", full, err))
			c.problems = append(c.problems, bullpen.RoleProblem{Path: full, Error: "cannot read the file: " + err.Error()})
			continue
		}
		r, err := ParseRole(full, data)
		if err != nil {
			errs = append(errs, err)
			c.problems = append(c.problems, bullpen.RoleProblem{Path: full, Error: bullpen.ErrorMessage(err)})
			continue
		}
		r.Source = "local/" + e.Name()
		c.add("local/"+strings.TrimSuffix(e.Name(), ext), r)
	}
	return c, errors.Join(errs...)
}

func (c *Catalog) add(id string, r bullpen.Role) {
	if _, ok := c.roles[id]; !ok {
		c.ids = append(c.ids, id)
		sort.Strings(c.ids)
	}
	r.Source = id
	c.roles[id] = r
}

// Role returns a role by ID ("starter/lead").
func (c *Catalog) Role(id string) (bullpen.Role, error) {
	r, ok := c.roles[id]
	if !ok {
		return bullpen.Role{}, bullpen.Errorf(bullpen.ENOTFOUND, "role %q not found (see GET /api/v1/roles)", id)
	}
	return r, nil
}

// List returns every role, by ID.
func (c *Catalog) List() []bullpen.RoleInfo {
	out := make([]bullpen.RoleInfo, 0, len(c.ids))
	for _, id := range c.ids {
		out = append(out, bullpen.RoleInfo{ID: id, Role: c.roles[id]})
	}
	return out
}

// Problems lists the role files of the roles directory that failed to
// load, with why, so that the API and the Agents panel can show them.
func (c *Catalog) Problems() []bullpen.RoleProblem {
	return append([]bullpen.RoleProblem{}, c.problems...)
}

// Pack returns the roles of one pack, by ID.
func (c *Catalog) Pack(name string) []bullpen.Role {
	var out []bullpen.Role
	for _, id := range c.ids {
		if strings.HasPrefix(id, name+"/") {
			out = append(out, c.roles[id])
		}
	}
	return out
}
