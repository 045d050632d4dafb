package agents

import (
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Effect is what a tool's call changes. The turn's journal keeps each
// kind from happening twice in its own way, so every tool declares one
// (Tool.Effect), and TestEveryOfficeEffectCommitsWithItsRecord runs every
// registered tool to check that the declaration holds.
type Effect int

const (
	// EffectNone: the call only reads. Its outcome is journaled after it
	// returns; after a crash it simply runs again.
	EffectNone Effect = iota
	// EffectOffice: the call writes the office's database. It writes only
	// through Call.Write, which records the call's outcome in the write's
	// own transaction, so the effect and its record commit together or
	// not at all, and a resumed turn replays the outcome instead of
	// writing again.
	EffectOffice
	// EffectOutside: the call changes something outside the database that
	// must not happen twice (a sandbox command). It is journaled as
	// started before it runs; after a crash it is reported as interrupted,
	// never run again unseen.
	EffectOutside
	// EffectIdempotent: the call changes something outside the database,
	// and the same call again leaves the same state (a file written with
	// the same content). After a crash it simply runs again.
	EffectIdempotent
)

// StepTx is the part of a write transaction that records a journal step;
// *store.Tx provides it, so a backend's "with tx" hook can record a tool
// call's outcome in the transaction of its write.
type StepTx interface {
	RecordStep(s store.Step) error
}

// Record stores the outcome a tool call returns, out, in tx: the
// transaction of the call's office write. A tool's Write gets one and
// runs it from its backend's hook (office.PostWith, wiki WritePageWith,
// the task and memory With methods).
type Record func(tx StepTx, out string) error

// Write is the one door through which a tool with an office effect
// writes: write makes the office write, running record in the write's
// own transaction with the text the call will return, and returns that
// text. In a journaled call record stores the outcome, and a record the
// journal already holds rolls the write back; elsewhere (an MCP call
// outside a turn) it stores nothing. A tool that does not declare
// EffectOffice cannot write through it (EINTERNAL).
func (c *Call) Write(write func(record Record) (string, error)) (string, error) {
	if c.effect != EffectOffice {
		return "", bullpen.Errorf(bullpen.EINTERNAL, "agents: tool %q writes to the office but does not declare EffectOffice", c.tool)
	}
	c.wrote = true
	return write(func(tx StepTx, out string) error {
		c.recorded = true
		if c.record == nil {
			return nil
		}
		return c.record(tx, out)
	})
}

// unrecorded says why a finished call of an office tool broke the rule:
// it wrote without Write, or its write's transaction did not run the
// record; "" when it kept it (or failed, so nothing committed).
func (c *Call) unrecorded(err error) string {
	switch {
	case c.effect != EffectOffice || err != nil || c.record == nil:
		return ""
	case !c.wrote:
		return "it returned without writing through Call.Write"
	case !c.recorded:
		return "its write's transaction did not run the record Call.Write gave it"
	}
	return ""
}
