package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// Memory is what the memory routes need; *memory.Service (package
// agents/memory) implements it. The service decides who may see and
// change which entries.
type Memory interface {
	Write(ctx context.Context, actor bullpen.Member, agentID int64, in bullpen.MemoryInput) (bullpen.MemoryEntry, bool, error)
	Get(ctx context.Context, actor bullpen.Member, agentID, id int64) (bullpen.MemoryEntry, error)
	List(ctx context.Context, actor bullpen.Member, agentID int64, o bullpen.MemoryListOptions) ([]bullpen.MemoryEntry, error)
	Update(ctx context.Context, actor bullpen.Member, agentID, id int64, u bullpen.MemoryUpdate) (bullpen.MemoryEntry, error)
	Forget(ctx context.Context, actor bullpen.Member, agentID, id int64) error
	History(ctx context.Context, actor bullpen.Member, agentID int64, limit int) ([]bullpen.MemoryHistory, error)
	Export(ctx context.Context, actor bullpen.Member, agentID int64, w io.Writer) error
	Import(ctx context.Context, actor bullpen.Member, agentID int64, data []byte) (bullpen.MemoryImportResult, error)
	Confirm(ctx context.Context, actor bullpen.Member, agentID, id int64, text *string) (bullpen.MemoryEntry, error)
}

// memoryRoutes serves /api/v1/agents/:id/memory.
func (s *Server) memoryRoutes(api fiber.Router) {
	m := api.Group("/agents/:id/memory", s.needMemory)
	m.Get("", s.memoryList)
	m.Post("", s.memoryWrite)
	m.Get("/history", s.memoryHistory)
	m.Get("/export", s.memoryExport)
	m.Post("/import", s.memoryImport)
	m.Get("/:entry", s.memoryGet)
	m.Patch("/:entry", s.memoryUpdate)
	m.Delete("/:entry", s.memoryForget)
	m.Post("/:entry/confirm", s.memoryConfirm)
}

func (s *Server) needMemory(c *fiber.Ctx) error {
	if s.svc.Memory == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "agent memory is not configured on this server")
	}
	return c.Next()
}

// memoryKey is an entry's address: the agent and the entry.
type memoryKey struct{ agent, entry int64 }

func entryKey(c *fiber.Ctx) (memoryKey, error) {
	a, err := idParam(c, "id")
	if err != nil {
		return memoryKey{}, err
	}
	e, err := idParam(c, "entry")
	return memoryKey{a, e}, err
}

func (s *Server) memoryList(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 100)
	if err != nil {
		return err
	}
	offset, err := intQuery(c, "offset", 0)
	if err != nil {
		return err
	}
	if limit < 1 || limit > 1000 {
		return bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 1000")
	}
	o := bullpen.MemoryListOptions{Query: c.Query("q"), Kind: c.Query("kind"), Pinned: boolQuery(c, "pinned"),
		Limit: int(limit), Offset: int(offset)}
	return keyedList(c, pathID, func(ctx context.Context, me bullpen.Member, agent int64) ([]bullpen.MemoryEntry, error) {
		return s.svc.Memory.List(ctx, me, agent, o)
	})
}

// memoryWritten is the answer to a write: the entry, and whether it was
// merged into a near-duplicate rather than added.
type memoryWritten struct {
	bullpen.MemoryEntry
	Merged bool `json:"merged"`
}

func (s *Server) memoryWrite(c *fiber.Ctx) error {
	agent, err := pathID(c)
	if err != nil {
		return err
	}
	var in bullpen.MemoryInput
	if err := decode(c, &in); err != nil {
		return err
	}
	e, merged, err := s.svc.Memory.Write(c.UserContext(), actor(c), agent, in)
	status := http.StatusCreated
	if merged {
		status = http.StatusOK
	}
	return reply(c, status, memoryWritten{e, merged}, err)
}

func (s *Server) memoryGet(c *fiber.Ctx) error {
	return keyed(c, entryKey, func(ctx context.Context, me bullpen.Member, k memoryKey) (bullpen.MemoryEntry, error) {
		return s.svc.Memory.Get(ctx, me, k.agent, k.entry)
	})
}

func (s *Server) memoryUpdate(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, entryKey, func(ctx context.Context, me bullpen.Member, k memoryKey, u bullpen.MemoryUpdate) (bullpen.MemoryEntry, error) {
		return s.svc.Memory.Update(ctx, me, k.agent, k.entry, u)
	})
}

func (s *Server) memoryForget(c *fiber.Ctx) error {
	return keyedDo(c, entryKey, func(ctx context.Context, me bullpen.Member, k memoryKey) error {
		return s.svc.Memory.Forget(ctx, me, k.agent, k.entry)
	})
}

func (s *Server) memoryHistory(c *fiber.Ctx) error {
	limit, err := intQuery(c, "limit", 100)
	if err != nil {
		return err
	}
	return keyedList(c, pathID, func(ctx context.Context, me bullpen.Member, agent int64) ([]bullpen.MemoryHistory, error) {
		return s.svc.Memory.History(ctx, me, agent, int(limit))
	})
}

func (s *Server) memoryExport(c *fiber.Ctx) error {
	agent, err := pathID(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.svc.Memory.Export(c.UserContext(), actor(c), agent, &buf); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="memory-%d-%s.jsonl"`, agent, time.Now().UTC().Format("20060102")))
	return c.Send(buf.Bytes())
}

// memoryImport takes JSON Lines as the raw request body.
func (s *Server) memoryImport(c *fiber.Ctx) error {
	agent, err := pathID(c)
	if err != nil {
		return err
	}
	res, err := s.svc.Memory.Import(c.UserContext(), actor(c), agent, c.Body())
	return reply(c, http.StatusOK, res, err)
}

// confirmRequest is the body of a confirmation: the wording as the human
// edited it, or none to save it as proposed.
type confirmRequest struct {
	Text *string `json:"text"`
}

func (s *Server) memoryConfirm(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, entryKey, func(ctx context.Context, me bullpen.Member, k memoryKey, in confirmRequest) (bullpen.MemoryEntry, error) {
		return s.svc.Memory.Confirm(ctx, me, k.agent, k.entry, in.Text)
	})
}
