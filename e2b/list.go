package e2b

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// listQuery is what GET /v2/sandboxes filters by.
type listQuery struct {
	metadata map[string]string
	states   map[string]bool
	template string
	limit    int
	offset   int
}

// parseList reads the filters: metadata=<url-encoded k=v&…>, state
// (comma-separated or repeated; default running and paused), template,
// limit and nextToken (an offset).
func parseList(q url.Values) (listQuery, error) {
	lq := listQuery{states: map[string]bool{}}
	if raw := q.Get("metadata"); raw != "" {
		pairs, err := url.ParseQuery(raw)
		if err != nil {
			return lq, bullpen.Errorf(bullpen.EINVALID, "metadata filter must be URL-encoded key=value pairs joined by &")
		}
		lq.metadata = map[string]string{}
		for k, vs := range pairs {
			key, err1 := url.QueryUnescape(k)
			val, err2 := url.QueryUnescape(vs[0])
			if err1 != nil || err2 != nil || key == "" {
				return lq, bullpen.Errorf(bullpen.EINVALID, "metadata filter must be URL-encoded key=value pairs joined by &")
			}
			lq.metadata[key] = val
		}
	}
	for _, v := range q["state"] {
		for _, st := range strings.Split(v, ",") {
			if st != "running" && st != "paused" {
				return lq, bullpen.Errorf(bullpen.EINVALID, "state must be running or paused, not %q", st)
			}
			lq.states[st] = true
		}
	}
	if len(lq.states) == 0 {
		lq.states["running"], lq.states["paused"] = true, true
	}
	lq.template = q.Get("template")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return lq, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 1000")
		}
		lq.limit = n
	}
	if v := q.Get("nextToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return lq, bullpen.Errorf(bullpen.EINVALID, "nextToken is not one this server gave")
		}
		lq.offset = n
	}
	return lq, nil
}

// list answers the member's sandboxes (an admin's: everyone's), filtered,
// oldest first; a page that is not the last sets X-Next-Token.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	lq, err := parseList(r.URL.Query())
	if err != nil {
		s.writeError(w, err)
		return
	}
	for k := range lq.metadata {
		if strings.HasPrefix(k, bullpen.SandboxReservedPrefix) {
			s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "metadata key %q is reserved", k))
			return
		}
	}
	infos, err := s.cfg.Boxes.List(r.Context(), member(r.Context()), lq.metadata)
	if err != nil {
		s.writeError(w, err)
		return
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].CreatedAt.Before(infos[j].CreatedAt) })
	out := []detailOut{}
	for _, in := range infos {
		d := detail(in)
		if !lq.states[d.State] || (lq.template != "" && d.TemplateID != lq.template) {
			continue
		}
		out = append(out, d)
	}
	if lq.offset > len(out) {
		lq.offset = len(out)
	}
	out = out[lq.offset:]
	if lq.limit > 0 && len(out) > lq.limit {
		out = out[:lq.limit]
		w.Header().Set("X-Next-Token", strconv.Itoa(lq.offset+lq.limit))
	}
	writeJSON(w, http.StatusOK, out)
}
