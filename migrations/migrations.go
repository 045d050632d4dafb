// Package migrations embeds Bullpen's versioned SQL migrations, one folder
// per dialect. Files are named NNNN_name.sql; each is applied once, in its
// own transaction, and recorded in schema_migrations.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
