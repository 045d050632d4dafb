package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"

	"github.com/bullpen-hq/bullpen/store"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// openDB opens a fresh, empty database of the kind named: "sqlite" in a
// temporary directory, or "postgres": a new database on the server that
// BULLPEN_BENCH_POSTGRES_URL (else BULLPEN_TEST_POSTGRES_URL) names,
// dropped again by the returned cleanup.
func openDB(ctx context.Context, kind string) (*store.DB, func(), error) {
	switch kind {
	case "sqlite":
		dir, err := os.MkdirTemp("", "bullpen-loadbench-")
		if err != nil {
			return nil, nil, err
		}
		db, err := store.Open(ctx, store.Config{DataDir: dir})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return db, func() { db.Close(); os.RemoveAll(dir) }, nil
	case "postgres":
		return freshPostgres(ctx)
	}
	return nil, nil, fmt.Errorf("-db must be sqlite or postgres, not %q", kind)
}

func freshPostgres(ctx context.Context) (*store.DB, func(), error) {
	base := os.Getenv("BULLPEN_BENCH_POSTGRES_URL")
	if base == "" {
		base = os.Getenv("BULLPEN_TEST_POSTGRES_URL")
	}
	if base == "" {
		return nil, nil, fmt.Errorf("-db postgres needs a server: set BULLPEN_BENCH_POSTGRES_URL (eval \"$(bash scripts/pg.sh start)\" starts a throwaway one)")
	}
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", base, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "bullpen_loadbench_" + hex.EncodeToString(b)
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		return nil, nil, fmt.Errorf("create database: %w", err)
	}
	drop := func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return nil, nil, err
	}
	u.Path = "/" + name
	db, err := store.Open(ctx, store.Config{URL: u.String()})
	if err != nil {
		drop()
		return nil, nil, err
	}
	return db, func() { db.Close(); drop() }, nil
}
