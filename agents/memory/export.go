package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bullpen-hq/bullpen"
)

// maxImportLines bounds one import.
const maxImportLines = 10_000

// Export writes agentID's entries that actor may see as JSON Lines, one
// entry a line, oldest first.
func (s *Service) Export(ctx context.Context, actor bullpen.Member, agentID int64, w io.Writer) error {
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return err
	}
	var all []bullpen.MemoryEntry
	for off := 0; ; off += 1000 {
		page, err := s.db.MemoryEntries(ctx, agentID, bullpen.MemoryListOptions{Limit: 1000, Offset: off})
		if err != nil {
			return err
		}
		all = append(all, s.seer(actor).filter(ctx, page)...)
		if len(page) < 1000 {
			break
		}
	}
	if err := s.fillAuthors(ctx, all); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i := len(all) - 1; i >= 0; i-- {
		if err := enc.Encode(all[i]); err != nil {
			return fmt.Errorf("memory: export: %w", err)
		}
	}
	return nil
}

// Import reads JSON Lines of entries (as Export writes them; text is
// required, kind, source_kind, source_id, wiki_page, channel_id and
// pinned are read, everything else is ignored; an entry a consolidation
// wrote comes in as taught by actor) and writes them to
// agentID as actor, merging near-duplicates. Every line is checked
// before any is written: one bad line is EINVALID naming it, and nothing
// is stored.
func (s *Service) Import(ctx context.Context, actor bullpen.Member, agentID int64, data []byte) (bullpen.MemoryImportResult, error) {
	var res bullpen.MemoryImportResult
	if _, err := s.agentFor(ctx, actor, agentID); err != nil {
		return res, err
	}
	ins, err := s.parseLines(ctx, actor, agentID, data)
	if err != nil {
		return res, err
	}
	for _, in := range ins {
		_, merged, err := s.Write(ctx, actor, agentID, in)
		if err != nil {
			return res, err
		}
		if merged {
			res.Merged++
		} else {
			res.Imported++
		}
	}
	return res, nil
}

func (s *Service) parseLines(ctx context.Context, actor bullpen.Member, agentID int64, data []byte) ([]bullpen.MemoryInput, error) {
	var ins []bullpen.MemoryInput
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(ins) == maxImportLines {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "an import holds at most %d entries", maxImportLines)
		}
		var in bullpen.MemoryInput
		if err := json.Unmarshal(line, &in); err != nil {
			return nil, bullpen.Errorf(bullpen.EINVALID, "line %d: not a JSON object of an entry", n)
		}
		if in.SourceKind == bullpen.MemorySourceConsolidation {
			// Written by a consolidation of the memory it was exported
			// from, which has no place here: the importer teaches it.
			in.SourceKind, in.SourceID = bullpen.MemorySourceHuman, 0
		}
		if err := in.Validate(); err != nil {
			return nil, bullpen.Errorf(bullpen.ErrorCode(err), "line %d: %s", n, bullpen.ErrorMessage(err))
		}
		var err error
		if in.ChannelID, err = s.audience(ctx, actor, agentID, in.ChannelID); err != nil {
			return nil, bullpen.Errorf(bullpen.EINVALID, "line %d: %s", n, bullpen.ErrorMessage(err))
		}
		ins = append(ins, in)
	}
	if err := sc.Err(); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "import: %v", err)
	}
	return ins, nil
}
