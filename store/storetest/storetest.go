// Package storetest opens real databases for tests: SQLite in a temp dir
// always, and a fresh PostgreSQL database for each test when
// BULLPEN_TEST_POSTGRES_URL names a server (CI starts one).
package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/bullpen-hq/bullpen/store"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// EnvPostgres names the server that PostgreSQL tests use.
const EnvPostgres = "BULLPEN_TEST_POSTGRES_URL"

// Dialects returns the dialects to test: sqlite, and postgres when a
// server is configured. With CI=true a missing server fails the test.
func Dialects(tb testing.TB) []string {
	tb.Helper()
	if os.Getenv(EnvPostgres) != "" {
		return []string{store.SQLite, store.Postgres}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not set in CI: the PostgreSQL suite would be skipped", EnvPostgres)
	}
	return []string{store.SQLite}
}

// Each runs fn as a subtest once per dialect, with a fresh database.
func Each(t *testing.T, fn func(t *testing.T, cfg store.Config)) {
	t.Helper()
	for _, d := range Dialects(t) {
		t.Run(d, func(t *testing.T) { fn(t, Config(t, d)) })
	}
}

// Config returns the store configuration of a fresh, empty database.
func Config(tb testing.TB, dialect string) store.Config {
	tb.Helper()
	if dialect == store.SQLite {
		return store.Config{DataDir: tb.TempDir()}
	}
	return store.Config{URL: freshPostgres(tb)}
}

// freshPostgres creates a database with a random name on the test server
// and drops it when the test ends.
func freshPostgres(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		tb.Skipf("%s not set", EnvPostgres)
	}
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		tb.Fatalf("connect to test postgres: %v", err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "bullpen_test_" + hex.EncodeToString(b)
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse %s: %v", EnvPostgres, err)
	}
	u.Path = "/" + name
	return u.String()
}
