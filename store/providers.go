package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

type providerRow struct {
	ID         int64 `gorm:"primaryKey"`
	Name       string
	Kind       string
	BaseURL    string
	APIKey     string
	OAuthToken string `gorm:"column:oauth_token"`
	Model      string
	// EmbeddingsModel is empty when the provider serves no embeddings.
	EmbeddingsModel string
	IsDefault       bool
	Source          string
	Version         int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (providerRow) TableName() string { return "providers" }

func (r *providerRow) toProvider() bullpen.Provider {
	return bullpen.Provider{ID: r.ID, Name: r.Name, Kind: r.Kind, BaseURL: r.BaseURL, Model: r.Model,
		EmbeddingsModel: r.EmbeddingsModel, IsDefault: r.IsDefault, Source: r.Source, APIKey: r.APIKey, OAuthToken: r.OAuthToken,
		APIKeyHint: bullpen.SecretHint(r.APIKey), OAuthTokenHint: bullpen.SecretHint(r.OAuthToken),
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func providerRowOf(p bullpen.Provider) providerRow {
	return providerRow{ID: p.ID, Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, APIKey: p.APIKey,
		OAuthToken: p.OAuthToken, Model: p.Model, EmbeddingsModel: p.EmbeddingsModel, IsDefault: p.IsDefault, Source: p.Source, Version: p.Version,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// CreateProvider stores a new provider; a taken name is ECONFLICT. A
// default provider takes the default from any other.
func (tx *Tx) CreateProvider(p bullpen.Provider) (bullpen.Provider, error) {
	if p.IsDefault {
		if err := tx.clearDefaultProvider(0); err != nil {
			return bullpen.Provider{}, err
		}
	}
	row := providerRowOf(p)
	row.ID, row.Version, row.CreatedAt, row.UpdatedAt = 0, 1, tx.now, tx.now
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.Provider{}, bullpen.Errorf(bullpen.ECONFLICT, "a provider named %q exists already", p.Name)
		}
		return bullpen.Provider{}, fmt.Errorf("store: insert provider: %w", err)
	}
	return row.toProvider(), nil
}

// UpdateProvider saves every field of p (found by ID) and bumps its
// version, so that cached clients of the old settings are rebuilt.
func (tx *Tx) UpdateProvider(p bullpen.Provider) (bullpen.Provider, error) {
	if p.IsDefault {
		if err := tx.clearDefaultProvider(p.ID); err != nil {
			return bullpen.Provider{}, err
		}
	}
	res := tx.g.Model(&providerRow{}).Where("id = ?", p.ID).Updates(map[string]any{
		"name": p.Name, "kind": p.Kind, "base_url": p.BaseURL, "api_key": p.APIKey, "oauth_token": p.OAuthToken,
		"model": p.Model, "embeddings_model": p.EmbeddingsModel, "is_default": p.IsDefault, "source": p.Source, "version": gorm.Expr("version + 1"),
		"updated_at": tx.now})
	if res.Error != nil {
		if isUniqueViolation(res.Error) {
			return bullpen.Provider{}, bullpen.Errorf(bullpen.ECONFLICT, "a provider named %q exists already", p.Name)
		}
		return bullpen.Provider{}, fmt.Errorf("store: update provider: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Provider{}, bullpen.Errorf(bullpen.ENOTFOUND, "provider %d not found", p.ID)
	}
	return tx.Provider(p.ID)
}

func (tx *Tx) clearDefaultProvider(except int64) error {
	err := tx.g.Model(&providerRow{}).Where("is_default AND id <> ?", except).
		Updates(map[string]any{"is_default": false, "version": gorm.Expr("version + 1"), "updated_at": tx.now}).Error
	if err != nil {
		return fmt.Errorf("store: clear default provider: %w", err)
	}
	return nil
}

// DeleteProvider removes a provider; unknown IDs are ENOTFOUND.
func (tx *Tx) DeleteProvider(id int64) error {
	res := tx.g.Where("id = ?", id).Delete(&providerRow{})
	if res.Error != nil {
		return fmt.Errorf("store: delete provider: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "provider %d not found", id)
	}
	return nil
}

// Provider reads one provider inside the transaction.
func (tx *Tx) Provider(id int64) (bullpen.Provider, error) {
	var row providerRow
	if err := tx.g.Where("id = ?", id).First(&row).Error; err != nil {
		return bullpen.Provider{}, notFound(err, "provider %d not found", id)
	}
	return row.toProvider(), nil
}

// ProviderByNameTx reads a provider by name ("" is the default) inside
// the transaction.
func (tx *Tx) ProviderByNameTx(name string) (bullpen.Provider, error) {
	return providerByName(tx.g, name)
}

func providerByName(g *gorm.DB, name string) (bullpen.Provider, error) {
	var row providerRow
	q := g
	if name == "" {
		q = q.Where("is_default")
	} else {
		q = q.Where("name = ?", name)
	}
	if err := q.First(&row).Error; err != nil {
		if name == "" {
			return bullpen.Provider{}, notFound(err, "no default provider is set")
		}
		return bullpen.Provider{}, notFound(err, "no provider named %q", name)
	}
	return row.toProvider(), nil
}

// Providers lists every provider, by name.
func (db *DB) Providers(ctx context.Context) ([]bullpen.Provider, error) {
	var rows []providerRow
	if err := db.read(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list providers: %w", err)
	}
	out := make([]bullpen.Provider, len(rows))
	for i := range rows {
		out[i] = rows[i].toProvider()
	}
	return out, nil
}

// Provider returns one provider by ID.
func (db *DB) Provider(ctx context.Context, id int64) (bullpen.Provider, error) {
	var row providerRow
	if err := db.read(ctx).Where("id = ?", id).First(&row).Error; err != nil {
		return bullpen.Provider{}, notFound(err, "provider %d not found", id)
	}
	return row.toProvider(), nil
}

// ProviderByName returns a provider by name; "" is the office default.
// Neither found is ENOTFOUND.
func (db *DB) ProviderByName(ctx context.Context, name string) (bullpen.Provider, error) {
	return providerByName(db.read(ctx), name)
}
