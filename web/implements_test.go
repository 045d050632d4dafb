package web_test

import (
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// The services satisfy the interfaces web declares. The checks live in a
// test so that web's own files import no service package (and so no store).
var (
	_ web.AgentService     = (*agents.Service)(nil)
	_ web.TurnService      = (*agents.Service)(nil)
	_ web.Office           = (*office.Office)(nil)
	_ web.Sandboxes        = (*sandboxes.Service)(nil)
	_ web.SandboxLifecycle = (*sandboxes.Service)(nil)
	_ web.SandboxExec      = (*sandboxes.Service)(nil)
	_ web.SandboxFiles     = (*sandboxes.Service)(nil)
	_ web.SandboxImages    = (*sandboxes.Service)(nil)
	_ web.SandboxPorts     = (*sandboxes.Service)(nil)
	_ web.SandboxRun       = (*sandboxes.Service)(nil)
	_ web.Settings         = (*settings.Service)(nil)
	_ web.Telegram         = (*telegram.Bridge)(nil)
	_ web.Wiki             = (*wiki.Wiki)(nil)
)
