package store

import "context"

type settingRow struct {
	Key   string `gorm:"primaryKey"`
	Value string
}

func (settingRow) TableName() string { return "settings" }

// SetSetting stores a key/value setting.
func (tx *Tx) SetSetting(key, value string) error {
	return tx.g.Save(&settingRow{Key: key, Value: value}).Error
}

// Setting returns a setting; ENOTFOUND when unset.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var row settingRow
	if err := db.read(ctx).Where("key = ?", key).First(&row).Error; err != nil {
		return "", notFound(err, "setting %q not set", key)
	}
	return row.Value, nil
}
