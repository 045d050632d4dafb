package store

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/migrations"
	"gorm.io/gorm"
)

// schemaMigration records one applied migration.
type schemaMigration struct {
	Version   int    `gorm:"primaryKey;autoIncrement:false"`
	Name      string `gorm:"not null"`
	AppliedAt time.Time
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// Migration is one embedded SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the dialect's migrations in version order.
func Migrations(dialect string) ([]Migration, error) {
	entries, err := fs.ReadDir(migrations.FS, dialect)
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("store: migration %s/%s: name must be NNNN_name.sql", dialect, name)
		}
		body, err := fs.ReadFile(migrations.FS, dialect+"/"+name)
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("store: two %s migrations numbered %d", dialect, out[i].Version)
		}
	}
	return out, nil
}

// migrate applies every migration not yet recorded, each in its own
// transaction together with its record.
func (db *DB) migrate(ctx context.Context) error {
	g := db.gdb.WithContext(ctx)
	create := `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMP NOT NULL)`
	if err := g.Exec(create).Error; err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	list, err := Migrations(db.dialect)
	if err != nil {
		return err
	}
	var done []int
	if err := g.Model(&schemaMigration{}).Pluck("version", &done).Error; err != nil {
		return fmt.Errorf("store: read schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	for _, v := range done {
		applied[v] = true
	}
	for _, m := range list {
		if applied[m.Version] {
			continue
		}
		err := g.Transaction(func(tx *gorm.DB) error {
			if db.dialect == Postgres {
				// Replicas starting together apply each migration once.
				if err := tx.Exec("SELECT pg_advisory_xact_lock(7411)").Error; err != nil {
					return err
				}
				var n int64
				tx.Model(&schemaMigration{}).Where("version = ?", m.Version).Count(&n)
				if n > 0 {
					return nil
				}
			}
			if err := tx.Exec(m.SQL).Error; err != nil {
				return err
			}
			return tx.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: db.now().UTC()}).Error
		})
		if err != nil {
			return fmt.Errorf("store: migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// AppliedMigrations returns the recorded migration versions, ascending.
func (db *DB) AppliedMigrations(ctx context.Context) ([]int, error) {
	var vs []int
	err := db.read(ctx).Model(&schemaMigration{}).Order("version").Pluck("version", &vs).Error
	if err != nil {
		return nil, fmt.Errorf("store: applied migrations: %w", err)
	}
	return vs, nil
}
